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


def find_cached(name: str, filename: str) -> Path | None:
    """A cached file from this process's own cache or, read-only, from `KERNELPILOT_SHARED_CACHE`.

    The evaluation worker writes only to a private cache; what the parent built (the workspace's
    kernels) it finds in the shared one, which it cannot change.
    """
    roots = [cache_root()] + ([Path(shared)] if (shared := os.environ.get("KERNELPILOT_SHARED_CACHE")) else [])
    return next((root / name / filename for root in roots if (root / name / filename).exists()), None)
