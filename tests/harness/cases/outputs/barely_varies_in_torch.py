"""The barely-varying task's forward in torch, for the `mixed` policy."""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1000.0 + torch.tanh(x).sum(dim=1) * 1e-3
