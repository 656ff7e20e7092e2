"""One candidate, evaluated as a user's one-shot `kernelpilot eval` and as a session's next candidate.

    python benchmarks/warm_eval.py [--device cuda] [--repeats 3] [--think 10] [TASK CANDIDATE]

Defaults to the shipped fused relu workspace on `relu_scale.py` (32 MB) for the device. Columns, each
the median of `--repeats`, measured side by side in one run with one fresh cache:
- cold: the first `kernelpilot eval` (kernels built, torch.compile measured);
- one-shot: `kernelpilot eval` again (build and compile baseline cached; a new process, a new worker);
- warm: through the harness's API in this process, the judge prepared `--think` seconds ahead (while the
  agent thinks: the worker started, the references made), as `optimize` evaluates every candidate.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from kernelbench_sample import ROOT, evaluate_cold, evaluate_warm  # a sibling script: its folder is on sys.path
from rich.console import Console
from rich.table import Table

from kernelpilot.harness import EvalOptions  # importable once kernelbench_sample put ROOT on sys.path

CASES = ROOT / "tests" / "harness" / "cases"
PHASES = ("build", "keeper_wait", "start", "setup", "baseline", "import", "verify", "profile", "worker_total")
DEFAULT_CANDIDATE = {"cuda": CASES / "cuda" / "fused", "cpu": CASES / "fused"}


def measured(evaluation: tuple[dict | None, float, str]) -> tuple[float, dict]:
    result, seconds, error = evaluation
    if result is None:
        raise SystemExit(f"evaluation failed: {error}")
    return seconds, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", nargs="?", type=Path, default=CASES / "relu_scale.py")
    parser.add_argument("candidate", nargs="?", type=Path)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--think", type=float, default=10.0)
    args = parser.parse_args()
    candidate = args.candidate or DEFAULT_CANDIDATE[args.device]
    options, cache = EvalOptions(device=args.device), tempfile.mkdtemp(prefix="kernelpilot-warm-")
    runs: dict[str, list[tuple[float, dict]]] = {"cold": [measured(evaluate_cold(args.task, candidate, options,
                                                                                 cache))]}
    for _ in range(args.repeats):
        runs.setdefault("one-shot", []).append(measured(evaluate_cold(args.task, candidate, options, cache)))
        runs.setdefault("warm", []).append(measured(evaluate_warm(args.task, candidate, options, cache,
                                                                  args.think)))
    table = Table(title=f"{candidate.relative_to(ROOT)} on {args.task.name} ({args.device}), seconds")
    for column in ("evaluation", "wall", *PHASES, "rewards"):
        table.add_column(column, justify="left" if column in ("evaluation", "rewards") else "right")
    for name, timed in runs.items():
        phases = [result["protocol"]["phase_seconds"] for _, result in timed]
        table.add_row(name, f"{statistics.median(s for s, _ in timed):.2f}",
                      *(f"{statistics.median(p.get(k, 0.0) for p in phases):.2f}"
                        for k in PHASES),
                      ",".join(f"{result['reward']}" + "".join(f" {v['check']}" for v in result["violations"])
                               for _, result in timed))
    Console(width=180).print(table)


if __name__ == "__main__":
    main()
