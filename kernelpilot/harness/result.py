"""The evaluation result: the JSON contract of DESIGN.md § Evaluation protocol, as frozen dataclasses.

`EvalResult.to_json()` is exactly what `kernelpilot eval --json` prints; `from_json` reads it back
(session logs, bench reports, the TUI).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any


def _finite_json(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(v) for v in value]
    return value


def format_speedup(value: float | None) -> str:
    """A speedup as every view writes it: `1.51×`, or `—` where there is none."""
    return "—" if value is None else f"{value:.2f}×"


def _float(value: Any) -> float | None:
    """Reads back what `_finite_json` wrote (float("nan") accepts the string)."""
    return None if value is None else float(value)


@dataclass(frozen=True)
class Violation:
    """A guard that fired. `check` is a stable name (see `harness.guards.CHECKS`)."""

    check: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "detail": self.detail}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Violation:
        return cls(check=data["check"], detail=data["detail"])


@dataclass(frozen=True)
class KernelTime:
    """One row of the per-kernel breakdown (device kernels on CUDA, launcher calls on CPU)."""

    name: str
    time_ms: float
    calls: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "time_ms": self.time_ms, "calls": self.calls}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelTime:
        return cls(name=data["name"], time_ms=data["time_ms"], calls=data["calls"])


@dataclass(frozen=True)
class KernelMetrics:
    """Nsight Compute's counters for one kernel over one profiled forward (its launches merged).

    Shown beside the timings, never rewarded: counters are read under kernel replay.
    """

    name: str
    launches: int
    duration_us: float
    dram_gb_per_s: float | None = None
    dram_pct_of_peak: float | None = None
    sm_pct_of_peak: float | None = None
    achieved_occupancy_pct: float | None = None
    theoretical_occupancy_pct: float | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KernelMetrics:
        return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Mismatch:
    """One mismatching element: where it is and both values, for the correctness view."""

    index: tuple[int, ...]
    expected: float
    actual: float

    def to_json(self) -> dict[str, Any]:
        return {"index": list(self.index), "expected": self.expected, "actual": self.actual}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Mismatch:
        return cls(index=tuple(data["index"]), expected=_float(data["expected"]), actual=_float(data["actual"]))


@dataclass(frozen=True)
class OutputCheck:
    """How one output tensor compared with the float64 reference (worst trial)."""

    index: int
    shape: tuple[int, ...]
    dtype: str
    max_abs_err: float
    max_rel_err: float
    atol: float
    rtol: float
    mismatched: int
    numel: int
    first_mismatches: tuple[Mismatch, ...] = ()
    error_grid: tuple[tuple[float, ...], ...] = ()
    """Max abs error by block of the flattened-to-2D output: a small heat map for the TUI."""

    @property
    def ok(self) -> bool:
        return self.mismatched == 0

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["shape"] = list(self.shape)
        data["first_mismatches"] = [m.to_json() for m in self.first_mismatches]
        data["error_grid"] = [list(row) for row in self.error_grid]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> OutputCheck:
        return cls(
            index=data["index"],
            shape=tuple(data["shape"]),
            dtype=data["dtype"],
            max_abs_err=_float(data["max_abs_err"]),
            max_rel_err=_float(data["max_rel_err"]),
            atol=data["atol"],
            rtol=data["rtol"],
            mismatched=data["mismatched"],
            numel=data["numel"],
            first_mismatches=tuple(Mismatch.from_json(m) for m in data.get("first_mismatches", [])),
            error_grid=tuple(tuple(row) for row in data.get("error_grid", [])),
        )


@dataclass(frozen=True)
class EvalResult:
    """The verdict on one candidate. `reward` follows CUDA Agent's milestones: −1, 1, 2, 3."""

    task: str
    candidate: str
    device: str
    built: bool = False
    correct: bool = False
    reward: int = -1
    violations: tuple[Violation, ...] = ()
    error: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    times_ms: dict[str, float | None] = field(default_factory=dict)
    spread_pct: dict[str, float | None] = field(default_factory=dict)
    speedup_vs_eager: float | None = None
    speedup_vs_compile: float | None = None
    kernels: tuple[KernelTime, ...] = ()
    ncu: tuple[KernelMetrics, ...] = ()
    """Nsight Compute counters per kernel when ncu ran; `protocol["ncu"]` says whether it did and why not."""
    outputs: tuple[OutputCheck, ...] = ()
    build_log: str = ""
    protocol: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Correct and clean: what counts as a usable candidate."""
        return self.correct and not self.violations

    @property
    def status(self) -> str:
        """One word for lists: build_failed, guard_violation, wrong, correct."""
        if not self.built:
            return "build_failed"
        if self.violations:
            return "guard_violation"
        if not self.correct:
            return "wrong"
        return "correct"

    def to_json(self) -> dict[str, Any]:
        """Strict-JSON-ready: NaN and ±Inf (an unwritten output's error) become "nan" / "inf" strings."""
        return _finite_json({
            "task": self.task,
            "candidate": self.candidate,
            "device": self.device,
            "built": self.built,
            "correct": self.correct,
            "reward": self.reward,
            "violations": [v.to_json() for v in self.violations],
            "error": self.error,
            "max_abs_err": self.max_abs_err,
            "max_rel_err": self.max_rel_err,
            "times_ms": dict(self.times_ms),
            "spread_pct": dict(self.spread_pct),
            "speedup_vs_eager": self.speedup_vs_eager,
            "speedup_vs_compile": self.speedup_vs_compile,
            "kernels": [k.to_json() for k in self.kernels],
            "ncu": [k.to_json() for k in self.ncu],
            "outputs": [o.to_json() for o in self.outputs],
            "build_log": self.build_log,
            "protocol": dict(self.protocol),
        })

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, allow_nan=False, default=str)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalResult:
        return cls(
            task=data["task"],
            candidate=data["candidate"],
            device=data["device"],
            built=data["built"],
            correct=data["correct"],
            reward=data["reward"],
            violations=tuple(Violation.from_json(v) for v in data.get("violations", [])),
            error=data.get("error"),
            max_abs_err=_float(data.get("max_abs_err")),
            max_rel_err=_float(data.get("max_rel_err")),
            times_ms=dict(data.get("times_ms", {})),
            spread_pct=dict(data.get("spread_pct", {})),
            speedup_vs_eager=data.get("speedup_vs_eager"),
            speedup_vs_compile=data.get("speedup_vs_compile"),
            kernels=tuple(KernelTime.from_json(k) for k in data.get("kernels", [])),
            ncu=tuple(KernelMetrics.from_json(k) for k in data.get("ncu", [])),
            outputs=tuple(OutputCheck.from_json(o) for o in data.get("outputs", [])),
            build_log=data.get("build_log", ""),
            protocol=dict(data.get("protocol", {})),
        )
