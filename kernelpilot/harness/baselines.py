"""Baseline cache: torch.compile timings per (task, device, torch version, mode), reused across evaluations.

Compiling is the slow part of a baseline (seconds to minutes), so a compile mode measured once is
not measured again unless `--no-cache`. Eager is cheap and is always re-timed in the same run as
the candidate; a cached compile time is scaled by how eager's time moved since it was cached (a busier
machine slows both alike), so the candidate is compared with compile under the run's own conditions.
The cache is written by the parent only, never by the candidate's process.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from kernelpilot.harness.paths import cache_dir
from kernelpilot.harness.protocol import TIMING_LOOP_VERSION
from kernelpilot.harness.timing import Samples, median


def cache_key(task_sha256: str, device_name: str, torch_version: str, mode: str, timed_runs: int) -> str:
    text = json.dumps([task_sha256, device_name, torch_version, mode, timed_runs, TIMING_LOOP_VERSION])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _path(key: str) -> Path:
    return cache_dir("baselines") / f"{key}.json"


def load(key: str) -> dict | None:
    try:
        return json.loads(_path(key).read_text())
    except (OSError, ValueError):
        return None


def store(key: str, entry: dict) -> None:
    path = _path(key)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry))
    os.replace(tmp, path)


def entry(compile_samples: dict, eager: Samples | None, latency_s: float | None) -> dict:
    """What is cached for a compile mode: its samples, and eager's beside them for `in_this_run`."""
    return {**compile_samples, "latency_s": latency_s, "eager_device": list(eager.device) if eager else None}


def in_this_run(cached: dict, eager: Samples | None) -> dict:
    """A cached compile timing scaled by eager now / eager then; `scale` says by how much."""
    then = cached.get("eager_device")
    scale = median(eager.device) / median(then) if eager and then else 1.0
    return {"device": [t * scale for t in cached["device"]], "host": [t * scale for t in cached["host"]],
            "cached": True, "scale": round(scale, 4)}
