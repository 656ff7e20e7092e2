"""`kernelpilot eval TASK CANDIDATE`: one evaluation, printed as a summary or as JSON."""

from __future__ import annotations

import sys

import torch

from kernelpilot.harness import EvalOptions, EvalResult, evaluate
from kernelpilot.harness.keeper_process import KeeperFailure
from kernelpilot.harness.result import format_speedup


def options_from(args) -> EvalOptions:
    defaults = EvalOptions()
    return EvalOptions(
        device=args.device or ("cuda" if torch.cuda.is_available() else "cpu"),
        trials=defaults.trials if args.trials is None else args.trials,
        timed_runs=defaults.timed_runs if args.timed_runs is None else args.timed_runs,
        tol=args.tol,
        timeout_s=defaults.timeout_s if args.timeout is None else args.timeout,
        build_timeout_s=defaults.build_timeout_s if args.build_timeout is None else args.build_timeout,
        compile_modes=tuple(m.strip() for m in args.compile_modes.split(",") if m.strip())
        if args.compile_modes else defaults.compile_modes,
        policy=args.policy or defaults.policy,
        use_cache=not args.no_cache,
        ncu=args.ncu,
    )


def summary(result: EvalResult) -> str:
    lines = [f"{result.status}  reward {result.reward}  ({result.device}, {result.protocol.get('device_name', '')})"]
    times = result.times_ms
    if times.get("candidate") is not None:
        parts = [f"{name} {value:.4f} ms" for name, value in times.items() if value is not None]
        lines.append("time: " + ", ".join(parts))
    if result.speedup_vs_eager is not None:
        lines.append(f"speedup: {format_speedup(result.speedup_vs_eager)} vs eager, "
                     f"{format_speedup(result.speedup_vs_compile)} vs torch.compile")
    if result.max_abs_err is not None:
        lines.append(f"max abs err {result.max_abs_err:.3g}, max rel err {result.max_rel_err:.3g}")
    lines += [f"violation {v.check}: {v.detail}" for v in result.violations]
    if result.error:
        lines.append(f"error: {result.error}")
    return "\n".join(lines)


def run(args) -> int:
    on_log = None if args.json else (lambda line: sys.stderr.write(line + "\n"))
    try:
        result = evaluate(args.task, args.candidate, options_from(args), on_log=on_log)
    except KeeperFailure as failure:  # the judge's own process failed: no verdict on the candidate
        sys.stderr.write(f"kernelpilot: not evaluated: {failure.headline}\n")
        return 1
    print(result.dumps() if args.json else summary(result))
    return 0
