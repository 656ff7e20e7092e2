"""The field's numbers over a bench's outcomes, overall and per level (KernelBench, CUDA Agent).

Rates are fractions of the judged tasks (every task but those that failed to load and those the judge failed
on, which are counted apart):
pass rate = built, correct and no violation; fast_p = passed and more than p times faster (fast_1 with p = 1),
against eager and against torch.compile. Speedups are geometric means over the passed tasks; the mean reward
counts a failed task's −1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping

from kernelpilot.bench.outcome import HARNESS_ERROR, TASK_ERROR, TaskOutcome

DEFAULT_P = (1.0, 1.5, 2.0)
NO_LEVEL = "none"


def summarize(outcomes: Iterable[TaskOutcome], p_values: Iterable[float] = DEFAULT_P) -> dict:
    outcomes, p_values = list(outcomes), sorted(set(p_values) | {1.0})
    summary = _group(outcomes, p_values)
    levels = sorted({o.level for o in outcomes}, key=lambda level: (level is None, level or 0))
    summary["by_level"] = {level_key(level): _group([o for o in outcomes if o.level == level], p_values)
                           for level in levels}
    return summary


def level_key(level: int | None) -> str:
    return NO_LEVEL if level is None else str(level)


def _group(outcomes: list[TaskOutcome], p_values: list[float]) -> dict:
    judged = [o for o in outcomes if o.judged]
    passed = [o for o in judged if o.passed]

    def rate(count: int) -> float | None:
        return round(count / len(judged), 4) if judged else None

    def fast(p: float, against: str) -> float | None:
        return rate(sum(1 for o in passed if (getattr(o, f"speedup_vs_{against}") or 0.0) > p))

    return {
        "tasks": len(outcomes),
        "judged": len(judged),
        "task_errors": sum(o.status == TASK_ERROR for o in outcomes),
        "harness_errors": sum(o.status == HARNESS_ERROR for o in outcomes),
        "passed": len(passed),
        "pass_rate": rate(len(passed)),
        "fast_1_eager": fast(1.0, "eager"),
        "fast_1_compile": fast(1.0, "compile"),
        "fast_p_eager": {f"{p:g}": fast(p, "eager") for p in p_values},
        "fast_p_compile": {f"{p:g}": fast(p, "compile") for p in p_values},
        "geomean_speedup_eager": geomean(o.speedup_vs_eager for o in passed),
        "geomean_speedup_compile": geomean(o.speedup_vs_compile for o in passed),
        "mean_reward": round(sum(o.reward for o in judged) / len(judged), 4) if judged else None,
        "statuses": dict(Counter(o.status for o in outcomes)),
        "violations": dict(Counter(check for o in judged for check in set(o.violation_checks))),
        "seconds": round(sum(o.seconds for o in outcomes), 1),
    }


def geomean(values: Iterable[float | None]) -> float | None:
    logs = [math.log(v) for v in values if v is not None and v > 0]
    return round(math.exp(sum(logs) / len(logs)), 4) if logs else None


def projected_seconds(outcomes: Iterable[TaskOutcome], population: Mapping[int | None, int]) -> float | None:
    """What all of a selection's tasks (`population`: tasks per level) would take at this run's pace: each level's
    mean seconds per task done times its number of tasks, as a sample stratified by level estimates it. None
    while a level has no task done."""
    by_level: dict[int | None, list[float]] = {}
    for outcome in outcomes:
        by_level.setdefault(outcome.level, []).append(outcome.seconds)
    if any(not by_level.get(level) for level in population):
        return None
    return round(sum(sum(by_level[level]) / len(by_level[level]) * count for level, count in population.items()), 1)
