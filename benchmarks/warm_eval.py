"""One candidate, evaluated as a user's one-shot `kernelpilot eval` and as a session's next candidate.

    python benchmarks/warm_eval.py [--device cuda] [--repeats 3] [--think 10] [TASK CANDIDATE]

Defaults to the shipped fused relu workspace on `relu_scale.py` (32 MB) for the device. Columns, each
the median of `--repeats`, measured side by side in one run with one fresh cache:
- cold: the first `kernelpilot eval` (kernels built, torch.compile measured);
- one-shot: `kernelpilot eval` again (build and compile baseline cached; a new process, a new worker);
- warm: through the harness's API in this process, the worker started `--think` seconds ahead (while the
  agent thinks), as `optimize` evaluates every candidate after the first.
"""

from __future__ import annotations

import argparse
import json
import os
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
from kernelpilot.harness import EvalOptions, evaluate, start_worker  # noqa: E402  (this checkout's harness)

CASES = ROOT / "tests" / "harness" / "cases"
DEFAULT_CANDIDATE = {"cuda": CASES / "cuda" / "fused", "cpu": CASES / "fused"}


def one_shot(task: Path, candidate: Path, device: str) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kernelpilot", "eval", str(task), str(candidate), "--device", device,
                           "--json"], capture_output=True, text=True, cwd=ROOT, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - started, json.loads(done.stdout)


def warm(task: Path, candidate: Path, device: str, think_s: float) -> tuple[float, dict]:
    worker = start_worker(device, {})
    time.sleep(think_s)
    started = time.perf_counter()
    result = evaluate(task, candidate, EvalOptions(device=device), worker=worker)
    return time.perf_counter() - started, result.to_json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", nargs="?", type=Path, default=CASES / "relu_scale.py")
    parser.add_argument("candidate", nargs="?", type=Path)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--think", type=float, default=10.0)
    args = parser.parse_args()
    candidate = args.candidate or DEFAULT_CANDIDATE[args.device]
    os.environ["KERNELPILOT_CACHE_DIR"] = tempfile.mkdtemp(prefix="kernelpilot-warm-")
    runs: dict[str, list[tuple[float, dict]]] = {"cold": [one_shot(args.task, candidate, args.device)]}
    for _ in range(args.repeats):
        runs.setdefault("one-shot", []).append(one_shot(args.task, candidate, args.device))
        runs.setdefault("warm", []).append(warm(args.task, candidate, args.device, args.think))
    table = Table(title=f"{candidate.relative_to(ROOT)} on {args.task.name} ({args.device}), seconds")
    for column in ("evaluation", "wall", "start", "setup", "baseline", "import", "verify", "profile", "rewards"):
        table.add_column(column, justify="left" if column in ("evaluation", "rewards") else "right")
    for name, measured in runs.items():
        phases = [result["protocol"]["phase_seconds"] for _, result in measured]
        table.add_row(name, f"{statistics.median(s for s, _ in measured):.2f}",
                      *(f"{statistics.median(p.get(k, 0.0) for p in phases):.2f}"
                        for k in ("start", "setup", "baseline", "import", "verify", "profile")),
                      ",".join(str(result["reward"]) for _, result in measured))
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
