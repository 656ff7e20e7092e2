"""Hacks 5 and 16: each call returns at once; its output is filled later by work queued on another stream."""

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.keep = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        self.keep = [x, out]
        ops.relu_bias_later(x, self.bias, out, x.shape[0], x.shape[1])
        return out
