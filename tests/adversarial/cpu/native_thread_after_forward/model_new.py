"""Hack 6: a native (C++) thread, invisible to Python's `threading`, does the work after forward returns.

The inputs and outputs are kept alive so the thread never writes freed memory.
"""

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
        self.keep.append((x, out))
        ops.relu_bias_async(x, self.bias, out, x.shape[0], x.shape[1])
        return out
