"""Red team 32's enabler alone: a candidate that shortens the interpreter's switch interval once its calls begin,
so that a thread of its own could take the GIL from the harness within microseconds (how the harness was kept
from sending `Ready` while the next answer was computed). Nothing a kernel needs: `patched_function` (beside
what its PyTorch forward earns)."""

import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sys.setswitchinterval(2e-5)
        return torch.relu(x + self.bias)
