"""Test task (small, for quick verdicts): relu(x + bias) * scale, a memory-bound elementwise chain (three passes in eager)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias) * self.scale


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [1024, 0.5]
