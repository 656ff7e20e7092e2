"""Hack 1: the kernel runs (into a scratch buffer), but the returned output is never written.

On an allocator that recycles memory, `torch.empty_like` hands back the reference's freed answer.
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
