"""Timing stability: the same candidate measured in two separate processes, and against ncu.

    python benchmarks/timing_stability.py [--task T --candidate C]

Runs `kernelpilot eval --json --no-cache` twice (two processes, two workers, each timing eager and
torch.compile itself) and compares the medians; the first run asks for `--ncu`, so where ncu is present
the kernel's `gpu__time_duration` is shown beside the harness's own numbers.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "harness" / "cases"


def evaluate_once(task: Path, candidate: Path, ncu: bool) -> dict:
    """One `kernelpilot eval` process; `--no-cache` so each process times torch.compile itself."""
    cmd = [sys.executable, "-m", "kernelpilot", "eval", str(task), str(candidate), "--device", "cuda", "--json",
           "--no-cache"] + (["--ncu"] if ncu else [])
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=ROOT / "benchmarks" / "tasks" / "relu_scale_large.py")
    parser.add_argument("--candidate", type=Path, default=CASES / "cuda" / "fused")
    parser.add_argument("--kernel", default="relu_bias_scale_kernel")
    parser.add_argument("--ncu", action=argparse.BooleanOptionalAction, default=True,
                        help="ask the first process for Nsight Compute counters")
    args = parser.parse_args()
    first = evaluate_once(args.task, args.candidate, ncu=args.ncu)
    second = evaluate_once(args.task, args.candidate, ncu=False)
    table = Table(title="Same candidate, two processes")
    for column in ("measurement", "process 1 (ms)", "process 2 (ms)", "difference"):
        table.add_column(column, justify="right" if column != "measurement" else "left")
    for name in ("candidate", "eager", "compile"):
        a, b = first["times_ms"][name], second["times_ms"][name]
        table.add_row(f"{name} median", f"{a:.4f}", f"{b:.4f}", f"{100 * abs(a - b) / min(a, b):.2f} %")
    table.add_row("candidate spread (IQR/median)", f"{first['spread_pct']['candidate']:.2f} %",
                  f"{second['spread_pct']['candidate']:.2f} %", "")
    for row in first["ncu"]:
        if args.kernel in row["name"]:
            table.add_row("ncu gpu__time_duration (kernel only)", f"{row['duration_us'] / 1e3:.4f}", "", "")
    for row in first["kernels"]:
        if args.kernel in row["name"]:
            table.add_row("harness profiler, same kernel", f"{row['time_ms']:.4f}", "", "")
    console = Console()
    for number, result in enumerate((first, second), 1):
        problems = [f"{v['check']}: {v['detail']}" for v in result["violations"]] + [result["error"] or ""]
        console.print(f"process {number}: {result['reward']=} {result['correct']=} {'; '.join(filter(None, problems))}")
    console.print(table)
    console.print(f"ncu: {first['protocol'].get('ncu')}")


if __name__ == "__main__":
    main()
