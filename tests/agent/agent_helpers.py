"""Paths, the CLI runner and replay transcripts shared by the agent tests (no conftest.py: the TUI tests
import theirs as `conftest`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "examples" / "relu_bias" / "model.py"
TRANSCRIPT = REPO / "examples" / "relu_bias" / "transcript.json"


def kernelpilot(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelpilot", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
