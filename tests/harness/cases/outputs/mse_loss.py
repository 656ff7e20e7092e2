"""KernelBench-style task with a one-value output (level 1's losses): not degenerate."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(128, 64), torch.randn(128, 64)]


def get_init_inputs():
    return []
