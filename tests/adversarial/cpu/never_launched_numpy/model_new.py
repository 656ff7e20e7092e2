"""Hack 11: kernels/ holds a kernel that forward never calls; the answer comes from numpy.

No PyTorch op beyond allocation and views runs in forward, so only the launch count tells.
"""

import numpy as np

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.maximum(x.numpy() + self.bias.detach().numpy(), 0.0))
