"""`kernelpilot eval TASK CANDIDATE`: one evaluation, printed as a summary or as JSON.

The judge's worker and keeper are started first, torch-free: their interpreters, torch and device contexts
come up while this process imports torch, not after it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pynvml

from kernelpilot.harness.keeper_process import KeeperFailure
from kernelpilot.harness.protocol import EvalOptions
from kernelpilot.harness.result import EvalResult, format_speedup
from kernelpilot.harness.task_files import check_task_file, locate_candidate
from kernelpilot.harness.worker_process import discard_worker, start_worker


def likely_device() -> str:
    """cuda when NVML sees a GPU: what torch says is known only once it is imported, and a wrong guess costs
    no more than the early worker (`prepare_judge` replaces one that does not suit)."""
    try:
        pynvml.nvmlInit()
        try:
            return "cuda" if pynvml.nvmlDeviceGetCount() else "cpu"
        finally:
            pynvml.nvmlShutdown()
    except pynvml.NVMLError:
        return "cpu"


def options_from(args) -> EvalOptions:
    import torch

    defaults = EvalOptions()
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.ncu and device == "cpu":
        sys.stderr.write("kernelpilot: --ncu reads CUDA counters: ignored with --device cpu\n")
    return EvalOptions(
        device=device,
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
        modes = [name for name in times if name.startswith("compile:")]
        repeated = modes if len(modes) == 1 else []  # one mode's time is "compile" itself
        parts = [f"{name} {value:.4f} ms" for name, value in times.items() if value is not None and name not in repeated]
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
    check_task_file(Path(args.task).resolve())  # a mistyped path is told at once, with no process to stop
    locate_candidate(Path(args.candidate).resolve())
    worker = start_worker(EvalOptions(device=args.device or likely_device()))
    try:
        from kernelpilot.harness import evaluate, prepare_judge  # torch, imported while the worker starts

        options = options_from(args)
    except BaseException:
        discard_worker(worker)
        raise
    try:  # prepare_judge and evaluate each discard the worker when they are done with it, or fail
        result = evaluate(args.task, args.candidate, options, on_log=on_log,
                          prepared=prepare_judge(args.task, options, worker))
    except KeeperFailure as failure:  # the judge's own process failed: no verdict on the candidate
        sys.stderr.write(f"kernelpilot: not evaluated: {failure.headline}\n")
        return 1
    print(result.dumps() if args.json else summary(result))
    return 0
