"""An output that barely varies around a large value (KernelBench's 2_65, a sum of sigmoids, is of this kind):
the constant 1000 passes fp32's 1e-4 rtol, so the output is judged at a narrowed tolerance, not refused."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1000.0 + torch.tanh(x).sum(dim=1) * 1e-3


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
