"""What the app shows, held in one place and changed in one place.

The session's part is `session.state.SessionState`, the fold `Session` keeps of its log, here fed by the events the
app is shown: the candidates, the best, the accept / reject marks and the turns can never differ between the two.
The app's own part is which candidate is selected and whether the session runs. Widgets draw from it; none owns it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kernelpilot.session.events import MANUAL_MODEL, SessionEvent
from kernelpilot.session.state import CandidateRecord, SessionState


@dataclass
class ViewModel:
    read_only: bool
    session: SessionState = field(default_factory=SessionState)
    selected: int | None = None
    running: bool = False
    paused: bool = False

    def apply(self, event: SessionEvent) -> None:
        self.session.apply(event)

    @property
    def manual(self) -> bool:
        """A person writes the candidates: no agent to steer, pause or stop."""
        started = self.session.started
        return started is not None and started.model == MANUAL_MODEL

    @property
    def candidates(self) -> dict[int, CandidateRecord]:
        return self.session.candidates

    @property
    def best_id(self) -> int | None:
        best = self.session.best
        return best.candidate_id if best else None

    @property
    def chosen(self) -> CandidateRecord | None:
        """The selected candidate."""
        return self.session.candidates.get(self.selected) if self.selected is not None else None

    def previous_of(self, candidate_id: int) -> CandidateRecord | None:
        """The candidate evaluated just before this one."""
        ids = list(self.session.candidates)
        position = ids.index(candidate_id)
        return self.session.candidates[ids[position - 1]] if position > 0 else None

    @property
    def state(self) -> str:
        if self.read_only:
            return "read-only"
        return "paused" if self.paused else ("running" if self.running else "finished")

    @property
    def status(self) -> str:
        """The status line: turn and cost (manual mode: saves), then the state."""
        usage = self.session.usage
        progress = (f"manual · {len(self.session.candidates)} saves" if self.manual
                    else f"turn {usage.turns} · ${usage.cost_usd:.2f}")
        return f"{progress} · {self.state}"
