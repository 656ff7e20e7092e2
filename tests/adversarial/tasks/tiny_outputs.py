"""Outputs of order 1e-7, inside fp32's 1e-4 atol, where a zero output would pass (hack 2): judged at a
narrowed tolerance (KernelBench's 1_37 FrobeniusNorm is of this kind), not refused."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 1e-7


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
