"""Benchmark task (512 MB input, GPU-bound rather than launch-bound): relu(x + bias) * scale, a memory-bound elementwise chain (three passes in eager)."""

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
    return [torch.randn(16384, 8192)]


def get_init_inputs():
    return [8192, 0.5]
