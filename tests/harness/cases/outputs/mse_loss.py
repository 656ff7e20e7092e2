"""KernelBench-style task with a one-value output (level 1's losses): not degenerate."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    scale = torch.rand(())  # as KernelBench's 94_MSELoss: without it the mean of 8192 squares is nearly the same
    # for every seed, and about one run in 200 the task would be refused as input-independent
    return [torch.randn(128, 64) * scale, torch.randn(128, 64)]


def get_init_inputs():
    return []
