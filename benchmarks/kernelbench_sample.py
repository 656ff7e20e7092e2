"""The judge on KernelBench's own tasks at their shipped sizes: what an evaluation costs beyond the task's
own GPU work, cold and warm.

    python benchmarks/kernelbench_sample.py KERNELBENCH_DIR [--every 8] [--tasks 1_1,3_16] [--device cuda]

KERNELBENCH_DIR is a checkout of ScalingIntelligence/KernelBench (its `KernelBench/level1..3` folders), or
a folder of task files named like them; nothing of it is part of this project. Each task is evaluated
twice with the reference itself as the candidate (`ModelNew = Model`) under `--policy mixed`. Cold: a
one-shot `kernelpilot eval` in a fresh process and cache (torch.compile measured). Warm: as a session's
next candidate finds it, through the harness's API in this process, with the compile baseline cached
and its judge prepared ahead (`prepare_judge`: the worker started on the task, the reference keeper's model
built and its probes run) `--think` seconds before, as while the agent thinks. The task's own GPU time is
every forward the protocol runs, at the measured medians: the keeper's references for the verify,
post-timing and probe seeds (native, and float64 counted as twice eager), trials, warm-up, timed,
calibration and re-check runs of eager, torch.compile and the candidate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kernelpilot.bench.solutions import reference_candidate  # noqa: E402  (this checkout's)
from kernelpilot.errors import KernelpilotError  # noqa: E402
from kernelpilot.harness import EvalOptions, evaluate, prepare_judge  # noqa: E402

TASK_NAME = re.compile(r"^(\d+)_.*\.py$")


def tasks_of(kernelbench: Path, every: int, chosen: list[str]) -> list[tuple[str, Path]]:
    """(`LEVEL_NUMBER`, path) of every `every`-th task of levels 1-3 by number, or the `chosen` ones in their
    order."""
    found = []
    for level in (1, 2, 3):
        folder = next((p for p in (kernelbench / "KernelBench" / f"level{level}", kernelbench / f"level{level}")
                       if p.is_dir()), None)
        if folder is None:
            continue
        numbered = sorted((int(m.group(1)), p) for p in folder.glob("*.py") if (m := TASK_NAME.match(p.name)))
        for index, (number, path) in enumerate(numbered):
            name = f"{level}_{number}"
            if (name in chosen) if chosen else index % every == 0:
                found.append((name, path))
    return sorted(found, key=lambda task: chosen.index(task[0])) if chosen else found


def evaluate_cold(task: Path, candidate: Path, options: EvalOptions, cache: str) -> tuple[dict | None, float, str]:
    """A user's one-shot `kernelpilot eval`, in a process of its own, with `cache`."""
    env = {**os.environ, "KERNELPILOT_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kernelpilot", "eval", str(task), str(candidate), "--device",
                           options.device, "--policy", options.policy, "--json", "--timeout", str(options.timeout_s)],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - started
    if done.returncode != 0 or not done.stdout.strip():
        return None, seconds, done.stderr.strip().splitlines()[-1][:120] if done.stderr.strip() else "no output"
    return json.loads(done.stdout), seconds, ""


def evaluate_warm(task: Path, candidate: Path, options: EvalOptions, cache: str,
                  think_s: float) -> tuple[dict | None, float, str]:
    """The next candidate of a session: its judge prepared `think_s` seconds ahead, the baseline cached."""
    os.environ["KERNELPILOT_CACHE_DIR"] = cache
    prepared = prepare_judge(task, options)
    time.sleep(think_s)
    started = time.perf_counter()
    try:
        result = evaluate(task, candidate, options, prepared=prepared)
    except KernelpilotError as error:
        return None, time.perf_counter() - started, str(error)[:120]
    return result.to_json(), time.perf_counter() - started, ""


def task_work_seconds(result: dict) -> float:
    """The task's own work: every forward of the protocol at the measured medians (ms → s)."""
    p, times = result["protocol"], result["times_ms"]
    eager, candidate = times["eager"] or 0.0, times["candidate"] or 0.0
    compiled = times["compile"] or 0.0
    references = len(p["verify_seeds"]) + len(p["post_seeds"]) + len(p.get("probe_seeds", []))  # each: native,
    # float64 (as two)
    runs = p["warmup_runs"] + p["timed_runs"]
    forwards_ms = (references * 3 * eager + runs * (eager + candidate)
                   + p.get("clock_calibration_runs", 0) * eager
                   + (p["trials"] + p["post_timing_checks"]) * candidate)
    if not result["protocol"]["compile_cached"]:
        forwards_ms += runs * compiled
    return forwards_ms / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernelbench", type=Path)
    parser.add_argument("--every", type=int, default=8, help="every Nth task of each level")
    parser.add_argument("--tasks", default="", help="LEVEL_NUMBER names instead, e.g. 1_1,3_16")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--think", type=float, default=10.0, help="seconds the judge is prepared ahead")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--skip", default="", help="LEVEL_NUMBER names to leave out (done in an earlier run)")
    args = parser.parse_args()
    chosen = [name for name in args.tasks.split(",") if name]
    options = EvalOptions(device=args.device, policy="mixed", timeout_s=1200)
    table = Table(title=f"KernelBench at shipped sizes, reference as candidate, --policy mixed ({args.device})")
    for column in ("task", "cold s", "compile s", "warm s", "task GPU s", "warm − GPU s", "verdict", "phases (warm)"):
        table.add_column(column, justify="left" if column in ("task", "verdict", "phases (warm)") else "right")
    rows = []
    with tempfile.TemporaryDirectory(prefix="kernelbench-sample-") as scratch:
        skipped = set(args.skip.split(","))
        for name, task in (t for t in tasks_of(args.kernelbench, args.every, chosen) if t[0] not in skipped):
            if args.json:  # before every task: a run cut short keeps what it measured
                args.json.write_text(json.dumps(rows, indent=1))
            candidate, cache = reference_candidate(task, Path(scratch)), tempfile.mkdtemp(dir=scratch)
            cold, cold_s, error = evaluate_cold(task, candidate, options, cache)
            warm, warm_s, error = (evaluate_warm(task, candidate, options, cache, args.think) if cold
                                   else (None, 0.0, error))
            if warm is None:
                table.add_row(name, f"{cold_s:.1f}", "-", "-", "-", "-", error or "failed", "")
                rows.append({"task": name, "error": error})
                continue
            gpu_s = task_work_seconds(warm)
            compile_s = sum(cold["protocol"]["compile_latency_s"].values())  # the cold target: ≤ this + 10 s
            verdict = ", ".join(v["check"] for v in warm["violations"]) or f"reward {warm['reward']}"
            phases = " ".join(f"{k} {v:.1f}" for k, v in warm["protocol"]["phase_seconds"].items()
                              if k != "worker_total")
            table.add_row(name, f"{cold_s:.1f}", f"{compile_s:.1f}", f"{warm_s:.1f}", f"{gpu_s:.1f}", f"{warm_s - gpu_s:.1f}", verdict,
                          phases)
            rows.append({"task": name, "cold_s": cold_s, "compile_latency_s": compile_s, "warm_s": warm_s, "task_gpu_s": gpu_s, "verdict": verdict,
                         "error": warm["error"],
                         "outside_clock": warm["protocol"].get("outside_clock"),
                         "phase_seconds": warm["protocol"]["phase_seconds"], "times_ms": warm["times_ms"]})
            Console().print(f"{name}: cold {cold_s:.1f} s (torch.compile {compile_s:.1f} s), warm {warm_s:.1f} s, task GPU {gpu_s:.1f} s, {verdict}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    console = Console(width=200)
    console.print(table)
    done = [r for r in rows if "warm_s" in r]
    if done:
        console.print(f"median warm − task GPU: {statistics.median(r['warm_s'] - r['task_gpu_s'] for r in done):.1f} s; "
                      f"longest warm: {max(r['warm_s'] for r in done):.1f} s; median cold − torch.compile's latency: "
                      f"{statistics.median(r['cold_s'] - r['compile_latency_s'] for r in done):.1f} s")


if __name__ == "__main__":
    main()
