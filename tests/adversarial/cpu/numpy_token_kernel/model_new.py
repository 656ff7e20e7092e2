"""Probe (hack 10, another library): numpy does the work; the kernel is launched on zero elements.

No PyTorch compute runs in forward and a kernel is launched, so neither the op audit nor the
launch count sees that the candidate's own code computes nothing.
"""

from pathlib import Path

import numpy as np
import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, 0, x.shape[1])
        out.numpy()[...] = np.maximum(x.numpy() + self.bias.detach().numpy(), 0.0)
        return out
