"""The per-task function every executor runs: one task's candidate through the harness, to a `TaskOutcome`.

A task the judge cannot use (`TaskError`), a path that is no candidate (`CandidateError`) and a failure of the
judge itself become outcomes with their reason: a bench goes on past them.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from pathlib import Path

from kernelpilot.bench.outcome import BAD_CANDIDATE, HARNESS_ERROR, TASK_ERROR, TaskOutcome
from kernelpilot.bench.suite import SuiteTask
from kernelpilot.errors import CandidateError, TaskError
from kernelpilot.harness import EvalOptions, PreparedJudge, evaluate, prepare_judge

Prepare = Callable[[Path, EvalOptions], PreparedJudge]


def judge_task(task: SuiteTask, candidate: Path, options: EvalOptions, prepare: Prepare = prepare_judge,
               spent_s: float = 0.0, on_log: Callable[[str], None] | None = None) -> TaskOutcome:
    """`spent_s`: time already spent on the task (making its candidate), counted in its seconds. `on_log` gets
    the evaluation's log lines (its phases, the build's output)."""
    started = time.perf_counter() - spent_s
    try:
        result = evaluate(task.path, candidate, options, on_log=on_log, prepared=prepare(task.path, options))
    except TaskError as error:
        return TaskOutcome.failed(task, TASK_ERROR, str(error), time.perf_counter() - started, str(candidate))
    except CandidateError as error:
        return TaskOutcome.failed(task, BAD_CANDIDATE, str(error), time.perf_counter() - started, str(candidate))
    except Exception as error:  # a bug, reported with the task it hit; the other tasks are still judged
        detail = "".join(traceback.format_exception(error)[-6:])
        return TaskOutcome.failed(task, HARNESS_ERROR, f"{type(error).__name__}: {error}\n{detail}",
                                  time.perf_counter() - started, str(candidate))
    return TaskOutcome.of(task, result, time.perf_counter() - started)
