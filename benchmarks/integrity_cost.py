"""What reward integrity round 2 costs an evaluation: this checkout's `kernelpilot eval` against an earlier
one's, alternating, on the same candidates, in one run.

    python benchmarks/integrity_cost.py --before PATH [--device cpu|cuda] [--rounds 3]

PATH is a checkout of the commit to compare with (`git worktree add --detach /tmp/before d807722`). Each
round evaluates every candidate with both checkouts (before first, then this one), each in a fresh
process with a fresh cache, so both build what they build and measure torch.compile cold. The table is
the median over rounds of each phase's wall time (`protocol.phase_seconds`) and of the whole command,
with the ratio after/before. The new checks: eager's runs watched as the candidate's (the parent's clock
calibration), the worker's CPU time read at every timed run, background CPU read after eager's calls,
the linked scan's bounded reads, and a private extensions folder (a load_inline candidate builds anew).
Then what one read of the worker's CPU time costs the judge.
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
ADVERSARIAL = ROOT / "tests" / "adversarial"
CANDIDATES = {
    "cpu": [("relu_bias.py", "cpu/legit_single_file.py"), ("matmul.py", "cpu/legit_matmul"),
            ("relu_bias.py", "cpu/legit_load_inline.py")],
    "cuda": [("relu_bias.py", "cuda/legit_relu_bias"), ("matmul.py", "cuda/legit_matmul")],
}
PHASES = ("start", "setup", "baseline", "import", "verify", "profile")


def evaluate(checkout: Path, device: str, task: str, candidate: str) -> dict:
    """One `kernelpilot eval` with `checkout`'s harness and a cache of its own: phase seconds and the total."""
    with tempfile.TemporaryDirectory(prefix="kernelpilot-cost-") as cache:
        env = {**os.environ, "PYTHONPATH": str(checkout), "KERNELPILOT_CACHE_DIR": cache}
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "kernelpilot", "eval", str(ADVERSARIAL / "tasks" / task),
                               str(ADVERSARIAL / candidate), "--device", device, "--json"],
                              capture_output=True, text=True, env=env, cwd=checkout, timeout=1800)
        total = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {candidate}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    result = json.loads(done.stdout)
    return {**result["protocol"]["phase_seconds"], "total": total, "reward": result["reward"]}


def cpu_read_us(reads: int = 2000) -> float:
    """Median cost of one `processes.cpu_time` read of a live process (this one), as the judge does per timed run."""
    sys.path.insert(0, str(ROOT))
    from kernelpilot.harness.processes import cpu_time

    times = []
    for _ in range(reads):
        started = time.perf_counter()
        cpu_time(os.getpid())
        times.append((time.perf_counter() - started) * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the commit to compare with")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    runs: dict[tuple[str, str], list[dict]] = {}
    for _ in range(args.rounds):
        for task, candidate in CANDIDATES[args.device]:
            for label, checkout in (("before", args.before.resolve()), ("after", ROOT)):
                runs.setdefault((candidate, label), []).append(evaluate(checkout, args.device, task, candidate))
    table = Table(title=f"kernelpilot eval --device {args.device}: seconds, median of {args.rounds} rounds")
    for column in ("candidate", "", *PHASES, "total", "rewards"):
        table.add_column(column, justify="left" if column in ("candidate", "") else "right")
    for _, candidate in CANDIDATES[args.device]:
        medians = {label: {key: statistics.median(run.get(key, 0.0) for run in runs[(candidate, label)])
                           for key in (*PHASES, "total")} for label in ("before", "after")}
        for label in ("before", "after"):
            rewards = " ".join(str(run["reward"]) for run in runs[(candidate, label)])
            table.add_row(candidate if label == "before" else "", label,
                          *(f"{medians[label][key]:.2f}" for key in (*PHASES, "total")), rewards)
        table.add_row("", "after/before", *(f"{medians['after'][key] / medians['before'][key]:.2f}"
                                            if medians["before"][key] else "-" for key in (*PHASES, "total")), "")
    console = Console()
    console.print(table)
    console.print(f"one read of the worker's CPU time (the judge, per timed run): {cpu_read_us():.0f} µs")


if __name__ == "__main__":
    main()
