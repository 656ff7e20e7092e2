"""What the model reads back from `evaluate`: the verdict first, then what it needs to fix or speed up."""

from __future__ import annotations

from kernelpilot.harness.result import EvalResult, format_speedup

ERROR_LIMIT = 6000


def describe_result(candidate_id: int, result: EvalResult) -> str:
    lines = [f"candidate {candidate_id}: {result.status}, reward {result.reward}"]
    if result.error:
        error = result.error if len(result.error) <= ERROR_LIMIT else result.error[:ERROR_LIMIT] + "\n…"
        lines.append(f"error:\n{error}")
    lines += [f"violation {v.check}: {v.detail}" for v in result.violations]
    if result.max_abs_err is not None:
        lines.append(f"max abs err {result.max_abs_err:.3g}, max rel err {result.max_rel_err:.3g}")
    times = {k: v for k, v in result.times_ms.items() if v is not None and ":" not in k}
    if times:
        lines.append("times (ms): " + ", ".join(f"{k} {v:.4g}" for k, v in times.items()))
    if result.speedup_vs_eager is not None:
        lines.append(f"speedup vs eager {format_speedup(result.speedup_vs_eager)}, "
                     f"vs torch.compile {format_speedup(result.speedup_vs_compile)}")
    if result.kernels:
        lines.append("kernels: " + ", ".join(f"{k.name} {k.time_ms:.4g} ms x{k.calls}" for k in result.kernels[:10]))
    return "\n".join(lines)
