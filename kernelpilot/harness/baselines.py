"""Baseline cache: torch.compile timings per (task, device, torch version, mode), reused across evaluations.

Compiling is the slow part of a baseline (seconds to minutes), so a compile mode measured once is
not measured again unless `--no-cache`. Eager is cheap and is always re-timed in the same run as
the candidate. The cache is written by the parent only, never by the candidate's process.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from kernelpilot.harness.paths import cache_dir
from kernelpilot.harness.protocol import TIMING_LOOP_VERSION


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
