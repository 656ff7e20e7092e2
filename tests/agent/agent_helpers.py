"""Paths, the CLI runner and replay transcripts shared by the agent tests (no conftest.py: the TUI tests
import theirs as `conftest`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "examples" / "relu_bias" / "model.py"
TRANSCRIPT = REPO / "examples" / "relu_bias" / "transcript.json"


def kernelpilot(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelpilot", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def write_transcript(folder: Path, *messages: tuple[str, list[tuple[str, dict]]]) -> Path:
    """A replay transcript from (content, [(tool, arguments), …]) pairs, written into `folder`."""
    path = folder / "transcript.json"
    path.write_text(json.dumps({"messages": [
        {"content": content, "tool_calls": [{"id": f"c{i}-{j}", "name": name, "arguments": arguments}
                                            for j, (name, arguments) in enumerate(calls)]}
        for i, (content, calls) in enumerate(messages)]}))
    return path
