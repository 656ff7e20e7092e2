"""Degenerate task (hack 14): the output depends on the weights only, never on the input's values.

Not constant (the bias is random), but the same for every input: an answer computed once passes.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bias).expand(x.shape[0], -1) + 0.0 * x.sum()


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [1024]
