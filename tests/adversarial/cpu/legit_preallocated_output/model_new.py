"""Legit: one output buffer allocated once and rewritten by every call (a common optimisation).

Every call's answer is fully written before forward returns, so no guard may fire.
"""

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.out: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.out is None or self.out.shape != x.shape:
            self.out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, self.out, x.shape[0], x.shape[1])
        return self.out
