"""Adversarial-suite task: relu(x + bias) over a 256 x 1024 fp32 input (small, memory-bound, fast)."""

import torch
import torch.nn as nn

ROWS, COLS = 256, 1024


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [COLS]
