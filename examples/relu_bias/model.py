"""Example task (KernelBench format): bias add followed by ReLU and scaling, a memory-bound chain."""

import torch
import torch.nn as nn

ROWS, COLS = 2048, 2048


class Model(nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias) * self.scale


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [COLS, 0.5]
