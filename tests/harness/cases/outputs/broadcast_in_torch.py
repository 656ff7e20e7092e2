"""The broadcast task's forward in torch, for the `mixed` policy: a broadcast view, as the reference returns."""

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.width = width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1, keepdim=True).expand(-1, self.width)
