"""Adversarial suite setup: a session-private kernelpilot cache, and the `gpu` marker's skip.

`tests/conftest.py` may already do both; these are no-ops then (the cache variable is only set
when missing, and an item is skipped at most once).
"""

from __future__ import annotations

import os
import tempfile

import pytest
import torch

if "KERNELPILOT_CACHE_DIR" not in os.environ:
    os.environ["KERNELPILOT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kernelpilot-adversarial-cache-")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "gpu" in item.keywords and not item.get_closest_marker("skip"):
            item.add_marker(skip)
