"""What a session's events add up to: its candidates, its best one, the user's marks on them, its usage.

`SessionState` is a fold over `SessionEvent`s and nothing else, so every reader that sees the same events holds
the same state: `Session` folds its log (read back on resume, appended live), the TUI folds the events it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelpilot.harness.result import EvalResult
from kernelpilot.session.events import Evaluation, LLMTurn, SessionEnded, SessionEvent, SessionStarted, UserDecision

ACCEPTED = "accepted"
REJECTED = "rejected"


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


@dataclass(frozen=True)
class Usage:
    """The model's turns and what they cost, over the whole session (across resumes)."""

    turns: int = 0
    cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def plus(self, turn: LLMTurn) -> Usage:
        return Usage(self.turns + 1, self.cost_usd + turn.cost_usd, self.prompt_tokens + turn.prompt_tokens,
                     self.completion_tokens + turn.completion_tokens)


@dataclass
class SessionState:
    """The fold. `marks` follow the user's decisions: one candidate at a time is accepted (the last accept), an
    undo gives the mark back to the accept before it; a rejection marks its candidate, until an unreject."""

    started: SessionStarted | None = None
    candidates: dict[int, CandidateRecord] = field(default_factory=dict)
    """By id, in evaluation order."""
    best: CandidateRecord | None = None
    marks: dict[int, str] = field(default_factory=dict)
    accepts: list[int | None] = field(default_factory=list)
    """The candidates of the accepts not undone, oldest first."""
    usage: Usage = Usage()
    ended: SessionEnded | None = None

    def apply(self, event: SessionEvent) -> None:
        match event:
            case SessionStarted():
                self.started = event
            case LLMTurn():
                self.usage = self.usage.plus(event)
            case Evaluation():
                self.candidates[event.candidate_id] = CandidateRecord(event.candidate_id, event.commit, event.result)
                self.best = best_of(list(self.candidates.values()))
            case UserDecision(decision="accept"):
                self._unmark_accepted()
                self.accepts.append(event.candidate_id)
                self._mark(event.candidate_id, ACCEPTED)
            case UserDecision(decision="undo") if self.accepts:
                self._unmark_accepted()
                self.accepts.pop()
                if self.accepts:
                    self._mark(self.accepts[-1], ACCEPTED)
            case UserDecision(decision="reject"):
                self._mark(event.candidate_id, REJECTED)
            case UserDecision(decision="unreject") if self.marks.get(event.candidate_id) == REJECTED:
                del self.marks[event.candidate_id]
            case SessionEnded():
                self.ended = event

    def _mark(self, candidate_id: int | None, mark: str) -> None:
        if candidate_id is not None:
            self.marks[candidate_id] = mark

    def _unmark_accepted(self) -> None:
        for candidate_id in [c for c, mark in self.marks.items() if mark == ACCEPTED]:
            del self.marks[candidate_id]
