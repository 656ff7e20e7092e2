"""A task whose model takes the judge's reference keeper down at its first call there: a task the judge cannot
use, said in one line."""

import os

import torch


class Model(torch.nn.Module):
    def forward(self, x):
        if "KERNELPILOT_KEEPER_DEVICE" in os.environ:  # set in the keeper's process alone
            os._exit(3)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
