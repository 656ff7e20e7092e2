"""What an evaluation costs as the task's tensors grow (CPU backend): the shipped fused relu kernel on the same
relu task at 1 MB and at 256 MB of output, side by side in one run.

    python benchmarks/cpu_scale.py [--sizes-mb 1,256] [--rounds 1]

Each evaluation is one `kernelpilot eval --device cpu --json` in a fresh process with a fresh cache. The
table gives its wall time, each phase's (`protocol.phase_seconds`), and the peak resident memory of the
largest process it ran (the judge or the worker: `getrusage`'s children maximum, read per evaluation
from a process that runs only that one), and the task's own work (every forward the protocol runs, at
the medians it measured) with what the evaluation cost beyond it. Issue 15's targets: at most 40 s between the sizes, no process
over 2.5 GB.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kernelbench_sample import task_work_seconds  # a sibling script: its folder is on sys.path
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CANDIDATE = ROOT / "tests" / "harness" / "cases" / "fused"
PHASES = ("keeper_wait", "start", "setup", "baseline", "import", "verify", "profile")
TASK = '''"""relu(x + bias) * scale on a {mb} MB output."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.bias) * self.scale


def get_inputs():
    return [torch.randn({rows}, 2048)]


def get_init_inputs():
    return [2048, 0.5]
'''

MEASURE = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"seconds": time.perf_counter() - started, "returncode": done.returncode, "stdout": done.stdout,
                  "stderr": done.stderr[-2000:],
                  "peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def evaluate(task: Path) -> dict:
    """One evaluation in a process of its own, so the children's peak is this evaluation's alone."""
    with tempfile.TemporaryDirectory(prefix="kernelpilot-scale-") as cache:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "KERNELPILOT_CACHE_DIR": cache}
        done = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "kernelpilot", "eval",
                               str(task), str(CANDIDATE), "--device", "cpu", "--json", "--timeout", "600"],
                              capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    measured = json.loads(done.stdout)
    if measured["returncode"] != 0:
        raise SystemExit(f"{task.name}: exit {measured['returncode']}: {measured['stderr'].strip()[-500:]}")
    result = json.loads(measured["stdout"])
    return {**result["protocol"]["phase_seconds"], "total": measured["seconds"], "peak_mb": measured["peak_mb"],
            "task": task_work_seconds(result), "reward": result["reward"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="1,256", help="output sizes, MB")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    sizes = [int(mb) for mb in args.sizes_mb.split(",")]
    runs: dict[int, list[dict]] = {mb: [] for mb in sizes}
    with tempfile.TemporaryDirectory(prefix="kernelpilot-scale-tasks-") as folder:
        tasks = {}
        for mb in sizes:
            tasks[mb] = Path(folder) / f"relu_scale_{mb}mb.py"
            tasks[mb].write_text(TASK.format(mb=mb, rows=mb * (1 << 20) // (4 * 2048)))
        for _ in range(args.rounds):
            for mb in sizes:
                runs[mb].append(evaluate(tasks[mb]))
    table = Table(title=f"kernelpilot eval --device cpu, fused relu kernel: seconds (median of {args.rounds})")
    for column in ("output", *PHASES, "total", "task's own", "beyond it", "peak MB", "reward"):
        table.add_column(column, justify="right")
    for mb, rows in runs.items():
        cell = {key: statistics.median(row.get(key, 0.0) for row in rows)
                for key in (*PHASES, "total", "task", "peak_mb")}
        table.add_row(f"{mb} MB", *(f"{cell[p]:.1f}" for p in PHASES), f"{cell['total']:.1f}", f"{cell['task']:.1f}",
                      f"{cell['total'] - cell['task']:.1f}", f"{cell['peak_mb']:.0f}",
                      ",".join(str(row["reward"]) for row in rows))
    Console(width=160).print(table)
    if len(sizes) > 1:
        totals = [statistics.median(row["total"] for row in runs[mb]) for mb in sizes]
        print(f"largest minus smallest: {totals[-1] - totals[0]:.1f} s")


if __name__ == "__main__":
    main()
