"""The reward harness: load a task and a candidate, build, verify, guard, profile, reward.

Imports torch alone (no textual / litellm / git), so it runs on GPU workers and Ray tasks.

    from kernelpilot.harness import EvalOptions, evaluate
    result = evaluate("model.py", "workspace/", EvalOptions(device="cpu"), on_log=print)
    result.reward, result.to_json()

`evaluate` raises `TaskError` for a task that cannot be used (missing names, import errors,
degenerate or non-deterministic outputs) and `CandidateError` for a path that is no candidate;
everything that goes wrong with the candidate itself (build, crash, timeout, wrong answer, guard)
is a verdict with reward −1.
"""

from kernelpilot.harness.evaluation import evaluate
from kernelpilot.harness.protocol import EvalOptions
from kernelpilot.harness.result import EvalResult, KernelTime, Mismatch, OutputCheck, Violation

__all__ = ["EvalOptions", "EvalResult", "KernelTime", "Mismatch", "OutputCheck", "Violation", "evaluate"]
