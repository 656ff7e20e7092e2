"""Where kernelpilot keeps its caches (builds, baselines, torch extensions)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """`KERNELPILOT_CACHE_DIR`, else `$XDG_CACHE_HOME/kernelpilot`, else `~/.cache/kernelpilot`."""
    if explicit := os.environ.get("KERNELPILOT_CACHE_DIR"):
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kernelpilot"


def cache_dir(name: str) -> Path:
    path = cache_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
