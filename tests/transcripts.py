"""Replay transcripts for tests: a scripted model, the one mock the project allows (at the LLM boundary)."""

from __future__ import annotations

import json
from pathlib import Path


def write_transcript(folder: Path, *messages: tuple[str, list[tuple[str, dict | str]]]) -> Path:
    """A replay transcript from (content, [(tool, arguments), …]) pairs, written into `folder`."""
    path = folder / "transcript.json"
    path.write_text(json.dumps({"messages": [
        {"content": content, "tool_calls": [{"id": f"c{i}-{j}", "name": name, "arguments": arguments}
                                            for j, (name, arguments) in enumerate(calls)]}
        for i, (content, calls) in enumerate(messages)]}))
    return path
