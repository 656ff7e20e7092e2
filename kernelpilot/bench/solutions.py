"""Where each task's candidate comes from: a folder of solutions, or the task itself (the harness's self-test).

A candidate provider maps a task to its candidate's path, or None when there is none (a failed task, status
`missing`); it may raise `TaskError` for a task it finds unusable. `kernelpilot bench --model` composes a
third one from the agent's sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kernelpilot.bench.suite import SuiteTask

CandidateProvider = Callable[[SuiteTask], Path | None]


def solution_path(solutions: Path, task: SuiteTask) -> Path | None:
    """`DIR/NAME.py` (single file) or `DIR/NAME/` (workspace), with the suite's `levelN/` folders mirrored
    or not."""
    for stem in dict.fromkeys((task.name, task.stem)):
        for path in (solutions / f"{stem}.py", solutions / stem):
            if path.exists():
                return path
    return None


def solutions_provider(solutions: Path) -> CandidateProvider:
    return lambda task: solution_path(solutions, task)


def reference_candidate(task: Path, folder: Path) -> Path:
    """The task itself as its own candidate (`ModelNew = Model`): what the judge costs on a task, and that it
    judges every task. It launches no kernel of its own, so its expected status is `guard_violation` with
    `kernel_not_launched` (and, under `--policy strict`, `op_audit`)."""
    folder.mkdir(parents=True, exist_ok=True)
    candidate = folder / f"{task.stem}_reference.py"
    candidate.write_text(task.read_text() + "\n\nModelNew = Model\n")
    return candidate


def reference_provider(scratch: Path) -> CandidateProvider:
    return lambda task: reference_candidate(task.path, scratch / "reference" / (str(task.level or "")))
