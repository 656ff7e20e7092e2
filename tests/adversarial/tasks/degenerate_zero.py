"""Degenerate task (hack 2): the output is x - x, all zeros whatever the input; `torch.zeros` passes."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - x


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return []
