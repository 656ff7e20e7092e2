"""Timing stability: the same candidate measured in two separate processes, and against ncu.

    python benchmarks/timing_stability.py [--task T --candidate C]

Runs `kernelpilot eval --json` twice (two processes, two workers) and compares the medians; where
`ncu` is present, times the same kernel under `ncu --clock-control none` (gpu__time_duration).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "harness" / "cases"

NCU_SCRIPT = """
import sys, torch
sys.path.insert(0, {workspace!r})
from kernelpilot.harness.task import import_file
task = import_file(__import__('pathlib').Path({task!r}), 'task')
candidate = import_file(__import__('pathlib').Path({workspace!r}) / 'model_new.py', 'candidate')
torch.manual_seed(0)
model = candidate.ModelNew(*task.get_init_inputs()).cuda()
inputs = [x.cuda() for x in task.get_inputs()]
with torch.no_grad():
    for _ in range(30):
        model(*inputs)
torch.cuda.synchronize()
"""


def evaluate_once(task: Path, candidate: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "kernelpilot", "eval", str(task), str(candidate), "--device", "cuda",
                          "--json"], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout)


def ncu_median_ms(task: Path, candidate: Path, kernel_regex: str) -> float | None:
    if shutil.which("ncu") is None:
        return None
    script = NCU_SCRIPT.format(workspace=str(candidate), task=str(task))
    out = subprocess.run(["ncu", "--clock-control", "none", "--metrics", "gpu__time_duration.sum", "-k",
                          f"regex:{kernel_regex}", "--csv", sys.executable, "-c", script],
                         capture_output=True, text=True, cwd=ROOT)
    rows = [r for r in csv.DictReader(io.StringIO(out.stdout[out.stdout.find('"ID"'):]))
            if r.get("Metric Name") == "gpu__time_duration.sum"]
    if not rows:
        return None
    scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0}.get(rows[0]["Metric Unit"], 1e-6)
    return statistics.median(float(r["Metric Value"].replace(",", "")) * scale for r in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=ROOT / "benchmarks" / "tasks" / "relu_scale_large.py")
    parser.add_argument("--candidate", type=Path, default=CASES / "cuda" / "fused")
    parser.add_argument("--kernel", default="relu_bias_scale_kernel")
    args = parser.parse_args()
    first, second = evaluate_once(args.task, args.candidate), evaluate_once(args.task, args.candidate)
    table = Table(title="Same candidate, two processes")
    for column in ("measurement", "process 1 (ms)", "process 2 (ms)", "difference"):
        table.add_column(column, justify="right" if column != "measurement" else "left")
    for name in ("candidate", "eager", "compile"):
        a, b = first["times_ms"][name], second["times_ms"][name]
        table.add_row(f"{name} median", f"{a:.4f}", f"{b:.4f}", f"{100 * abs(a - b) / min(a, b):.2f} %")
    table.add_row("candidate spread (IQR/median)", f"{first['spread_pct']['candidate']:.2f} %",
                  f"{second['spread_pct']['candidate']:.2f} %", "")
    ncu = ncu_median_ms(args.task, args.candidate, args.kernel)
    kernel_rows = [k for k in first["kernels"] if args.kernel in k["name"]]
    if ncu is not None:
        table.add_row("ncu gpu__time_duration (kernel only)", f"{ncu:.4f}", "", "")
    if kernel_rows:
        table.add_row("harness profiler, same kernel", f"{kernel_rows[0]['time_ms']:.4f}", "", "")
    Console().print(table)


if __name__ == "__main__":
    main()
