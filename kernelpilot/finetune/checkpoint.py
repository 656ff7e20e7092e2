"""The run's last checkpoint under OUT/checkpoint: adapter, value head, optimizer state and where the run was.

Written to a side folder and moved into place, so a run killed while saving keeps its previous checkpoint.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import torch

FOLDER = "checkpoint"
ADAPTER = "adapter"


def folder(out: Path) -> Path:
    return out / FOLDER


def exists(out: Path) -> bool:
    return (folder(out) / "state.pt").is_file()


def save(out: Path, model: Any, adapter: dict[str, torch.Tensor], head: Any, state: dict[str, Any]) -> None:
    """`adapter`: the model's trainable tensors, whole (`distributed.trainable_state`); `state`: plain data (stage,
    step, metrics so far) and the optimizer's state."""
    partial = out / f"{FOLDER}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    model.save_pretrained(partial / ADAPTER, state_dict=adapter)
    head.save(partial)
    torch.save(state, partial / "state.pt")
    shutil.rmtree(folder(out), ignore_errors=True)
    partial.replace(folder(out))


def load_state(out: Path) -> dict[str, Any]:
    return torch.load(folder(out) / "state.pt", map_location="cpu", weights_only=True)
