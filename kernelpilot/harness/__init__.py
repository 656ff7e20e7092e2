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

from kernelpilot.harness.evaluation import evaluate
from kernelpilot.harness.protocol import EvalOptions
from kernelpilot.harness.result import EvalResult, KernelTime, Mismatch, OutputCheck, Violation
from kernelpilot.harness.prepared import PreparedJudge, prepare_judge

__all__ = ["EvalOptions", "EvalResult", "KernelTime", "Mismatch", "OutputCheck", "PreparedJudge", "Violation",
           "evaluate", "prepare_judge"]
