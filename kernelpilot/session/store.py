"""Where sessions live: `.kernelpilot/sessions/<id>/` (`session.Session` reads and writes them).

    <id>/session.jsonl   the log (beside the workspace: the agent's tools cannot write it)
    <id>/workspace/      the git workspace (task copy, model_new.py, kernels/)
    <id>/candidates/<n>/ candidate n's files as evaluated (what the harness, and a bench scoring the session, read)
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

from kernelpilot.errors import SessionError

DEFAULT_ROOT = Path(".kernelpilot") / "sessions"
LOG_NAME = "session.jsonl"
WORKSPACE_NAME = "workspace"
FINISHED = "done"
"""How a finished session ended: the agent said it was done. Resuming it runs nothing; a session that ran out
of budget, was stopped or killed goes on."""


def candidate_dir(session_dir: Path, candidate_id: int) -> Path:
    """Where candidate `candidate_id`'s files are exported for its evaluation."""
    return session_dir / "candidates" / str(candidate_id)


def new_session_id() -> str:
    """Sortable by start time, unique without coordination."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def locate(ref: str | Path, root: Path = DEFAULT_ROOT) -> Path:
    """A session's directory from its id (under `root`) or its path."""
    for candidate in (Path(ref), root / str(ref)):
        if (candidate / LOG_NAME).is_file():
            return candidate
    raise SessionError(f"unknown session '{ref}' (no {LOG_NAME} in {root / str(ref)})")


def list_sessions(root: Path = DEFAULT_ROOT) -> list[Path]:
    """Session directories under `root`, oldest first."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / LOG_NAME).is_file())
