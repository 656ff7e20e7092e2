"""TUI test setup: config redirected to a temporary XDG_CONFIG_HOME, and a helper to let the app settle."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def config_home(tmp_path_factory, monkeypatch) -> Path:
    home = tmp_path_factory.mktemp("config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


async def settle(pilot, rounds: int = 4) -> None:
    """Wait until the session's thread and the workers are done and their messages handled
    (cancelled exclusive workers are skipped)."""
    while not pilot.app.session_done.is_set():
        await asyncio.sleep(0.02)
    for _ in range(rounds):
        await pilot.pause()
        workers = [w for w in pilot.app.workers if not w.is_cancelled]
        await asyncio.gather(*(w.wait() for w in workers), return_exceptions=True)
    await pilot.pause()
