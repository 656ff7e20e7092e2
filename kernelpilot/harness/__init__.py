"""The reward harness: load a task and a candidate, build, verify, guard, profile, reward.

Imports torch alone (no textual / litellm / git), so it runs on GPU workers and Ray tasks.

    from kernelpilot.harness import EvalOptions, evaluate
    result = evaluate("model.py", "workspace/", EvalOptions(device="cpu"), on_log=print)
    result.reward, result.to_json()

`evaluate` raises `TaskError` for a task that cannot be used (missing names, import errors,
degenerate or non-deterministic outputs) and `CandidateError` for a path that is no candidate;
everything that goes wrong with the candidate itself (build, crash, timeout, wrong answer, guard)
is a verdict with reward −1.

A caller that evaluates one candidate after another (a session, a bench task) prepares the next judge
ahead, while the agent thinks: `prepared = prepare_judge(task, options)` (a worker that starts and loads
the task, and the judge's reference keeper, which builds the task's model and checks it), then
`evaluate(..., prepared=prepared)`, and `prepared.discard()` for one that was never used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kernelpilot.harness.evaluation import evaluate
    from kernelpilot.harness.prepared import PreparedJudge, prepare_judge
    from kernelpilot.harness.protocol import EvalOptions
    from kernelpilot.harness.result import EvalResult, KernelTime, Mismatch, OutputCheck, Violation

_HOMES = {"evaluate": "evaluation", "PreparedJudge": "prepared", "prepare_judge": "prepared", "EvalOptions": "protocol",
          **dict.fromkeys(("EvalResult", "KernelTime", "Mismatch", "OutputCheck", "Violation"), "result")}
__all__ = ["EvalOptions", "EvalResult", "KernelTime", "Mismatch", "OutputCheck", "PreparedJudge", "Violation",
           "evaluate", "prepare_judge"]


def __getattr__(name: str) -> object:
    """The API on first use: `worker_process` and `keeper_process` are torch-free, so a one-shot `kernelpilot
    eval` starts its worker and keeper before it imports torch itself."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
