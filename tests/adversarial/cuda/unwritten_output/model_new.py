"""Hack 1 on CUDA: the kernel writes a scratch buffer; the returned output is never written.

The caching allocator hands `torch.empty_like` the block the reference's answer was freed from.
"""

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scratch = torch.empty_like(x)
        ops.relu_bias(x, self.bias, scratch, x.shape[0], x.shape[1])
        return torch.empty_like(x)
