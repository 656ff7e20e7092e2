"""TUI responsiveness: how long the event loop works at a stretch while evaluations run, late in
sessions of growing length.

    python benchmarks/tui_responsiveness.py [--calls 0 300 1000] [--runs 3]

The session is the TUI tests' scripted one (`tests/tui/test_responsiveness.py`): N tool calls already
in the transcript, a turn streamed token by token, then five candidates, each evaluated for 0.8 s while
its build log streams in. Measured: the main thread's CPU time between two ticks of a 10 ms timer during
the evaluations, the longest stretch of each run. The issue's bound is 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "tui"))

from test_responsiveness import MAX_BUSY_S, longest_stretch_during_evaluations  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, nargs="+", default=[0, 300, 1000], help="tool calls already shown")
    parser.add_argument("--runs", type=int, default=3, help="sessions per length")
    args = parser.parse_args()
    table = Table(title=f"Longest stretch of event-loop work during evaluations (bound {MAX_BUSY_S * 1000:.0f} ms)")
    for column in ("tool calls in the transcript", "median of runs (ms)", "worst run (ms)", "runs"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory() as folder:
        for calls in args.calls:
            stretches = [asyncio.run(longest_stretch_during_evaluations(Path(folder) / f"{calls}-{run}", calls))
                         for run in range(args.runs)]
            table.add_row(str(calls), f"{statistics.median(stretches) * 1000:.0f}",
                          f"{max(stretches) * 1000:.0f}", str(args.runs))
    Console().print(table)


if __name__ == "__main__":
    main()
