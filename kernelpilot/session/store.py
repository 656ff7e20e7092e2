"""Where sessions live and how a finished one is read back: `.kernelpilot/sessions/<id>/`.

    <id>/session.jsonl   the log (beside the workspace: the agent's tools cannot write it)
    <id>/workspace/      the git workspace (task copy, model_new.py, kernels/)
    <id>/candidates/<n>/ candidate n's files as evaluated (what the harness, and a bench scoring the session, read)
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult
from kernelpilot.session.events import Evaluation, SessionEnded, SessionEvent, SessionStarted
from kernelpilot.session.log import read_events
from kernelpilot.session.workspace import Workspace

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


@dataclass(frozen=True)
class CandidateRecord:
    """One evaluated candidate: its id in the session, its workspace commit, its verdict."""

    candidate_id: int
    commit: str
    result: EvalResult


def best_of(candidates: list[CandidateRecord]) -> CandidateRecord | None:
    """The session's result: among correct, violation-free candidates, the fastest against torch.compile."""
    usable = [c for c in candidates if c.result.passed]
    if not usable:
        return None
    return max(usable, key=lambda c: (c.result.speedup_vs_compile or 0.0, c.result.speedup_vs_eager or 0.0,
                                      -c.candidate_id))


class SessionRecord:
    """A session read back from disk: its events, candidates and workspace (nothing runs)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.log_path = directory / LOG_NAME
        self.events: list[SessionEvent] = read_events(self.log_path)
        started = [e for e in self.events if isinstance(e, SessionStarted)]
        if not started:
            raise SessionError(f"{self.log_path} has no session_started event")
        self.started: SessionStarted = started[0]
        self.workspace = Workspace(directory / WORKSPACE_NAME)

    @property
    def session_id(self) -> str:
        return self.started.session_id

    @property
    def ended(self) -> SessionEnded | None:
        return next((e for e in reversed(self.events) if isinstance(e, SessionEnded)), None)

    def candidates(self) -> list[CandidateRecord]:
        return [CandidateRecord(e.candidate_id, e.commit, e.result) for e in self.events if isinstance(e, Evaluation)]

    def best(self) -> CandidateRecord | None:
        return best_of(self.candidates())
