"""Timing fairness: a candidate that is the reference's own code must be timed like eager.

    python benchmarks/fairness.py [--device cuda] [--repeats 2]

For each task, the candidate is the task's source with `class ModelNew(Model): pass` appended, so it runs
exactly eager's ops. It is evaluated with `--policy mixed` (it launches no kernel of its own, so the
verdict is not the point) and the table shows candidate / eager: anything the harness does for the
candidate's timed runs and not for eager's shows up as a ratio above 1. Launch-bound tasks are the
sensitive ones: there the host's time between the CUDA events is most of what is measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
TASKS = [ROOT / "tests" / "adversarial" / "tasks" / "relu_bias.py", ROOT / "examples" / "relu_bias" / "model.py",
         ROOT / "tests" / "adversarial" / "tasks" / "matmul.py", ROOT / "benchmarks" / "tasks" / "relu_scale_large.py"]


def reference_as_candidate(task: Path, folder: Path) -> Path:
    candidate = folder / f"{task.stem}_as_candidate.py"
    candidate.write_text(task.read_text() + "\n\nclass ModelNew(Model):\n    pass\n")
    return candidate


def evaluate(task: Path, candidate: Path, device: str) -> dict:
    cmd = [sys.executable, "-m", "kernelpilot", "eval", str(task), str(candidate), "--device", device, "--json",
           "--policy", "mixed"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--repeats", type=int, default=2, help="evaluations per task (separate processes)")
    parser.add_argument("--tasks", type=Path, nargs="+", default=TASKS)
    args = parser.parse_args()
    table = Table(title="Reference as candidate: candidate / eager (1.00 is fair)")
    for column in ("task", "eager (ms)", "candidate (ms)", "candidate / eager", "candidate spread"):
        table.add_column(column, justify="left" if column == "task" else "right")
    with tempfile.TemporaryDirectory() as folder:
        for task in args.tasks:
            candidate = reference_as_candidate(task, Path(folder))
            ratios = []
            for _ in range(args.repeats):
                result = evaluate(task, candidate, args.device)
                times = result["times_ms"]
                ratios.append(times["candidate"] / times["eager"])
                table.add_row(f"{task.parent.name}/{task.name}", f"{times['eager']:.4f}", f"{times['candidate']:.4f}",
                              f"{ratios[-1]:.2f}", f"{result['spread_pct']['candidate']:.1f} %")
            table.add_row(f"[b]{task.parent.name}/{task.name}: median", "", "", f"[b]{statistics.median(ratios):.2f}", "",
                          end_section=True)
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
