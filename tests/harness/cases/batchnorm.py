"""BatchNorm2d as KernelBench runs it: the model as constructed (training mode), so each forward normalises
with the batch's own statistics, not the running ones."""

import torch
import torch.nn as nn

BATCH, CHANNELS, HEIGHT, WIDTH = 16, 8, 32, 32


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():  # weights away from 1 and 0, so a kernel that ignores them is wrong
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(x)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH) * 3 + 1]


def get_init_inputs():
    return [CHANNELS]
