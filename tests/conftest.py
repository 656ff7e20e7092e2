"""Shared test setup: an isolated kernelpilot cache per test session, and the `gpu` marker's skip."""

from __future__ import annotations

import os
import tempfile

import pytest

# Two cores are shared between this process and the evaluations' processes: OpenMP threads that spin at each
# barrier while another process holds a core made in-process training ten times slower under that load.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402  (after the OpenMP setting, which is read when torch loads its runtime)

_CACHE = tempfile.mkdtemp(prefix="kernelpilot-test-cache-")
os.environ.setdefault("KERNELPILOT_CACHE_DIR", _CACHE)


def pytest_collection_modifyitems(config, items):
    # The UI's responsiveness is measured first, before hundreds of evaluations have run in this process.
    items.sort(key=lambda item: "tests/tui/" not in item.nodeid.replace("\\", "/"))
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
