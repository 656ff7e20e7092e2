"""What watching a call for PyTorch compute costs the call: the dispatch mode (verification trials) against
the profiler started once around the loop (warm-up and timed calls), side by side in one process.

    python benchmarks/audit_cost.py [--device cpu|cuda] [--calls 300]

The candidate is `tests/adversarial/cpu/legit_workspace` on the CPU (one allocation, one kernel call) and
eager ReLU on CUDA; the table is the median host time of one call, and what each way of watching adds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from kernelpilot.harness.audit import DispatchRecorder, mark_call, watching_calls

ROOT = Path(__file__).resolve().parents[1]


def candidate(device: str) -> tuple[torch.nn.Module, torch.Tensor]:
    if device == "cpu":
        sys.path.insert(0, str(ROOT / "tests" / "adversarial" / "cpu" / "legit_workspace"))
        from model_new import ModelNew
        return ModelNew(1024).eval(), torch.randn(256, 1024)
    return torch.nn.ReLU(), torch.randn(256, 1024, device="cuda")


def median_call_us(model, x, calls: int, around) -> float:
    """Median host time of one call; `around()` is entered outside the clock, as the timing loop does."""
    times = []
    for _ in range(calls):
        with around():
            start = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    model, x = candidate(args.device)
    recorder = DispatchRecorder()
    rows = []
    with torch.no_grad():
        median_call_us(model, x, 50, nullcontext)  # warm up
        for _ in range(3):
            plain = median_call_us(model, x, args.calls, nullcontext)
            with_mode = median_call_us(model, x, args.calls, lambda: recorder)
            with watching_calls():
                watched = median_call_us(model, x, args.calls, mark_call)
            rows.append((plain, with_mode, watched))
    table = Table(title=f"One call's host time, {args.device} (µs, median of {args.calls})")
    for column in ("unwatched", "dispatch mode", "added", "profiler + mark", "added"):
        table.add_column(column, justify="right")
    for plain, with_mode, watched in rows:
        table.add_row(f"{plain:.1f}", f"{with_mode:.1f}", f"{with_mode - plain:+.1f}", f"{watched:.1f}",
                      f"{watched - plain:+.1f}")
    Console().print(table)


if __name__ == "__main__":
    main()
