"""A task whose get_inputs returns a tensor rather than a list of forward's arguments."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def get_inputs():
    return torch.randn(4, 4)


def get_init_inputs():
    return []
