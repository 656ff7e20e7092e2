"""`Session`: the one owner of a session's state — its directory, log, workspace, candidates, best and decisions.

Every change is an event recorded here: appended to the log first, then folded into the `SessionState`, then
shown to the listener. Opening a session folds its log the same way, so a resumed (or reviewed) session holds
exactly what the live one held, and the log and the state cannot disagree.

    session = Session.create(root, task, skill=..., model=..., sampling=..., device=..., policy=..., starter=...)
    session = Session.open(id_or_dir, root, read_only=False)     # resume; read_only=True to review
    session.record(event); session.record_decision("accept", 3, {...})
    candidate_id, commit = session.next_candidate(); folder = session.candidate_folder(candidate_id)
    session.add_evaluation(candidate_id, commit, result)
    session.candidates(); session.best(); session.diff(old, new); session.files_at(commit); session.summary(reason)
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult
from kernelpilot.harness.task_files import sha256_file
from kernelpilot.session.events import Evaluation, SessionEnded, SessionEvent, SessionStarted, UserDecision
from kernelpilot.session.log import SessionLog, read_events
from kernelpilot.session.state import CandidateRecord, SessionState, Usage
from kernelpilot.session.store import (
    DEFAULT_ROOT,
    LOG_NAME,
    WORKSPACE_NAME,
    candidate_dir,
    locate,
    new_session_id,
)
from kernelpilot.session.workspace import Workspace

Listener = Callable[[SessionEvent], None]


@dataclass(frozen=True)
class SessionSummary:
    """How a run of the session ended and what it holds: `optimize --headless` prints it as JSON."""

    session_id: str
    session_dir: Path
    reason: str
    turns: int
    cost_usd: float
    prompt_tokens: int
    completion_tokens: int
    candidates: tuple[CandidateRecord, ...]
    best: CandidateRecord | None

    def to_json(self) -> dict[str, Any]:
        def brief(record: CandidateRecord) -> dict[str, Any]:
            r = record.result
            return {"candidate_id": record.candidate_id, "commit": record.commit, "status": r.status,
                    "reward": r.reward, "speedup_vs_eager": r.speedup_vs_eager,
                    "speedup_vs_compile": r.speedup_vs_compile}

        return {"session_id": self.session_id, "session_dir": str(self.session_dir), "reason": self.reason,
                "turns": self.turns, "cost_usd": self.cost_usd, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "candidates": [brief(c) for c in self.candidates],
                "best": brief(self.best) if self.best else None}


class Session:
    """A session on disk and its state. Thread-safe: the agent's thread records its steps while the UI's records
    the user's decisions and reads candidates."""

    def __init__(self, directory: Path, *, read_only: bool, on_event: Listener = lambda event: None) -> None:
        self.directory = directory
        self.read_only = read_only
        self.on_event = on_event
        """Sees every recorded event, after the log has it (from the recording thread)."""
        self._lock = threading.Lock()
        self._events: list[SessionEvent] = read_events(self.log_path) if self.log_path.is_file() else []
        self._state = SessionState()
        for event in self._events:
            self._state.apply(event)
        self._log = None if read_only else SessionLog(self.log_path)
        self.workspace = Workspace(directory / WORKSPACE_NAME)

    @classmethod
    def create(cls, root: Path, task: Path, *, skill: str, model: str, sampling: Mapping[str, Any], device: str,
               policy: str, starter: Mapping[str, str], on_event: Listener = lambda event: None) -> Session:
        """A new session under `root`: the workspace made from the task (and `starter` files), the log begun with
        `SessionStarted` (shown to `on_event` by `replay`, like any logged event)."""
        session_id = new_session_id()
        directory = Path(root) / session_id
        Workspace.create(directory / WORKSPACE_NAME, task, dict(starter))
        _ignore_sessions_folder(Path(root))
        session = cls(directory, read_only=False, on_event=on_event)
        session._append(SessionStarted(session_id=session_id, task_path=str(task.resolve()),
                                       task_sha256=sha256_file(task), skill=skill, model=model,
                                       sampling=dict(sampling), device=device, policy=policy))
        return session

    @classmethod
    def open(cls, ref: str | Path, root: Path = DEFAULT_ROOT, *, read_only: bool = True,
             on_event: Listener = lambda event: None) -> Session:
        """A session from its id (under `root`) or its directory, as its log left it."""
        session = cls(locate(ref, Path(root)), read_only=read_only, on_event=on_event)
        if session._state.started is None:
            raise SessionError(f"{session.log_path} has no session_started event")
        return session

    # ----- where it lives

    @property
    def log_path(self) -> Path:
        return self.directory / LOG_NAME

    @property
    def workspace_dir(self) -> Path:
        return self.workspace.root

    @property
    def started(self) -> SessionStarted:
        return self._state.started

    @property
    def session_id(self) -> str:
        return self.started.session_id

    # ----- its state (any thread)

    @property
    def events(self) -> tuple[SessionEvent, ...]:
        """Every logged event, in order."""
        with self._lock:
            return tuple(self._events)

    @property
    def ended(self) -> SessionEnded | None:
        """How the session last ended (None: it has not, or was killed)."""
        return self._state.ended

    @property
    def usage(self) -> Usage:
        return self._state.usage

    def candidates(self) -> list[CandidateRecord]:
        with self._lock:
            return list(self._state.candidates.values())

    def candidate(self, candidate_id: int) -> CandidateRecord:
        with self._lock:
            found = self._state.candidates.get(candidate_id)
        if found is None:
            raise SessionError(f"session {self.session_id} has no candidate {candidate_id}")
        return found

    def best(self) -> CandidateRecord | None:
        return self._state.best

    def decisions(self) -> list[UserDecision]:
        return [e for e in self.events if isinstance(e, UserDecision)]

    def marks(self) -> dict[int, str]:
        """accepted / rejected, by candidate id."""
        with self._lock:
            return dict(self._state.marks)

    def summary(self, reason: str) -> SessionSummary:
        usage = self.usage
        return SessionSummary(self.session_id, self.directory, reason, usage.turns, usage.cost_usd,
                              usage.prompt_tokens, usage.completion_tokens, tuple(self.candidates()), self.best())

    def diff(self, old_commit: str | None, new_commit: str) -> str:
        return self.workspace.diff(old_commit, new_commit)

    def files_at(self, commit: str) -> dict[str, str]:
        return self.workspace.files_at(commit)

    # ----- changing it

    def record(self, event: SessionEvent) -> None:
        """Log the event (when it persists), fold it in, then show it to the listener."""
        self._append(event)
        self.on_event(event)

    def replay(self) -> None:
        """Show every logged event to the listener, as if it were happening now."""
        for event in self.events:
            self.on_event(event)

    def record_decision(self, decision: str, candidate_id: int | None, detail: Mapping[str, Any]) -> None:
        self.record(UserDecision(decision=decision, candidate_id=candidate_id, detail=dict(detail)))

    def task_intact(self) -> bool:
        """The workspace's task copy is still the task the session started with."""
        return self.workspace.task_intact(self.started.task_sha256)

    def has_unevaluated_head(self) -> bool:
        """The workspace's last commit is the next candidate's, which a kill kept from its verdict, and nothing
        changed since: it is evaluated as it is, not committed twice."""
        return (self.workspace.head_message().strip() == f"candidate {len(self.candidates()) + 1}"
                and not self.workspace.repo.is_dirty(untracked_files=True))

    def next_candidate(self) -> tuple[int, str]:
        """The next candidate's id and commit: the workspace as it is now, committed (or the commit a kill left
        without its verdict)."""
        candidate_id = len(self.candidates()) + 1
        commit = (self.workspace.head_sha() if self.has_unevaluated_head()
                  else self.workspace.snapshot(f"candidate {candidate_id}"))
        return candidate_id, commit

    def candidate_folder(self, candidate_id: int, commit: str) -> Path:
        """The candidate's files, exported from its commit for the harness (afresh: a killed evaluation may have
        left a folder behind)."""
        folder = candidate_dir(self.directory, candidate_id)
        shutil.rmtree(folder, ignore_errors=True)
        self.workspace.export(commit, folder)
        return folder

    def add_evaluation(self, candidate_id: int, commit: str, result: EvalResult) -> CandidateRecord:
        """The verdict, attached to its commit (a git note) and recorded."""
        self.workspace.attach_result(commit, result)
        self.record(Evaluation(candidate_id=candidate_id, commit=commit, result=result))
        return self.candidate(candidate_id)

    def _append(self, event: SessionEvent) -> None:
        if self._log is None:
            raise SessionError(f"session {self.session_id} is open read-only")
        with self._lock:
            self._log.append(event)
            if event.persist:
                self._events.append(event)
                self._state.apply(event)


def _ignore_sessions_folder(root: Path) -> None:
    """Keep `.kernelpilot/` out of the user's own git repository."""
    marker = root.parent / ".gitignore"
    if root.parent.name == ".kernelpilot" and not marker.exists():
        marker.write_text("*\n")
