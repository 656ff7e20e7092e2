"""One task's line in a bench: the fields of DESIGN.md § Bench, frozen, with `to_json` / `from_json`."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from kernelpilot.bench.suite import SuiteTask
from kernelpilot.harness import EvalResult

MISSING = "missing"
"""No candidate for the task: a failed task."""
BAD_CANDIDATE = "bad_candidate"
"""The candidate path is no candidate (neither a ModelNew file nor a workspace): a failed task."""
TASK_ERROR = "task_error"
"""The task cannot be loaded, or is degenerate: reported with its reason, counted apart from the judged."""
HARNESS_ERROR = "harness_error"
"""The judge itself failed on the task (a bug in kernelpilot, with its traceback's end): counted apart, and the
run goes on, so one task cannot cost a suite's run."""
NOT_JUDGED = (TASK_ERROR, HARNESS_ERROR)
PASSED = "correct"
"""Built, correct, no violation (`EvalResult.status`; the other verdicts are wrong, build_failed,
guard_violation)."""


@dataclass(frozen=True)
class TaskOutcome:
    """The verdict on one task's candidate, as a bench reports it."""

    task: str
    level: int | None
    status: str
    reward: int = -1
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    violations: tuple[dict[str, str], ...] = ()
    error: str | None = None
    seconds: float = 0.0
    """Wall time spent on the task: the evaluation, and with `--model` the session that made the candidate."""
    candidate: str | None = None
    times_ms: dict[str, float | None] = field(default_factory=dict)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    device_name: str | None = None

    @property
    def judged(self) -> bool:
        return self.status not in NOT_JUDGED

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    @property
    def violation_checks(self) -> list[str]:
        return [v["check"] for v in self.violations]

    @property
    def reason(self) -> str:
        """Why it did not pass, in one line: the violations' kinds, else the error's first line."""
        if self.violations:
            return ", ".join(self.violation_checks)
        return self.error.splitlines()[0][:200] if self.error else ""

    @classmethod
    def of(cls, task: SuiteTask, result: EvalResult, seconds: float) -> TaskOutcome:
        return cls(task.name, task.level, result.status, result.reward, _finite(result.speedup_vs_eager),
                   _finite(result.speedup_vs_compile), tuple(v.to_json() for v in result.violations),
                   result.error, round(seconds, 3), result.candidate, dict(result.times_ms),
                   dict(result.protocol.get("phase_seconds", {})), result.protocol.get("device_name"))

    @classmethod
    def failed(cls, task: SuiteTask, status: str, error: str, seconds: float = 0.0,
               candidate: str | None = None) -> TaskOutcome:
        return cls(task.name, task.level, status, error=error, seconds=round(seconds, 3), candidate=candidate)

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["violations"] = list(self.violations)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskOutcome:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["violations"] = tuple(values.get("violations", ()))
        return cls(**values)


def _finite(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None
