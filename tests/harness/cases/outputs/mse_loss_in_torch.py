"""The loss task's forward in torch, for the `mixed` policy."""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)
