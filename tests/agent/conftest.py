"""Fixtures for agent tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def transcript(tmp_path):
    """Writes a replay transcript from (content, [(tool, arguments), …]) pairs; returns its path."""

    def write(*messages: tuple[str, list[tuple[str, dict]]]) -> Path:
        path = tmp_path / "transcript.json"
        path.write_text(json.dumps({"messages": [
            {"content": content, "tool_calls": [{"id": f"c{i}-{j}", "name": name, "arguments": arguments}
                                                for j, (name, arguments) in enumerate(calls)]}
            for i, (content, calls) in enumerate(messages)]}))
        return path

    return write
