"""The critic: one linear layer on the policy's last hidden state, saved apart from the adapter.

It reads the hidden states detached, so training it never moves the policy; a linear probe is enough to learn
a baseline for GAE on the policy's own features, at a fraction of a second critic model's cost.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

FILENAME = "value_head.safetensors"


class ValueHead(nn.Module):
    def __init__(self, hidden_size: int) -> None:
        super().__init__()
        self.linear = nn.Linear(hidden_size, 1)
        nn.init.zeros_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """[n, hidden] float32 → [n] values."""
        return self.linear(hidden).squeeze(-1)

    def save(self, folder: Path) -> Path:
        from safetensors.torch import save_file

        path = folder / FILENAME
        save_file({name: tensor.detach().cpu().contiguous() for name, tensor in self.state_dict().items()}, path)
        return path

    def load(self, folder: Path) -> None:
        from safetensors.torch import load_file

        self.load_state_dict(load_file(folder / FILENAME))
