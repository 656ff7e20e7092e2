"""Hack 2: a constant answer (zeros). On a degenerate task it would pass: the task must be refused; on one
whose outputs are merely small it must be wrong at the narrowed tolerance."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int | None = None):
        super().__init__()
        if cols is not None:
            self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
