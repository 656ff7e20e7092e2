"""What a bench shows while it runs: rich's progress bar over the tasks and a table of the latest verdicts
with the running pass rate; and the final table."""

from __future__ import annotations

import threading
from collections import deque

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from kernelpilot.bench.outcome import TaskOutcome
from kernelpilot.bench.report import SUMMARY_COLUMNS, level_cell, reward_cell, summary_rows
from kernelpilot.bench.suite import SuiteTask
from kernelpilot.harness.result import format_speedup

RECENT_ROWS = 8
STATUS_STYLE = {"correct": "green", "task_error": "yellow"}


class LiveView:
    """A context manager; `started` and `finished` are called from the runner's threads. Off a terminal (a log,
a CI job, a remote GPU machine), where nothing live is drawn, each verdict is one line."""

    def __init__(self, console: Console, total: int, done_before: list[TaskOutcome]) -> None:
        self.console = console
        self._progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), TimeRemainingColumn(), console=console)
        self._bar = self._progress.add_task("bench", total=total, completed=len(done_before))
        self._recent: deque[TaskOutcome] = deque(maxlen=RECENT_ROWS)
        self._running: dict[str, None] = {}
        self._judged = sum(o.judged for o in done_before)
        self._passed = sum(o.passed for o in done_before)
        self._lock = threading.Lock()
        self._live = Live(self._render(), console=console, refresh_per_second=4, transient=True)

    def __enter__(self) -> LiveView:
        self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._live.__exit__(*exc)

    def started(self, task: SuiteTask) -> None:
        with self._lock:
            self._running[task.name] = None
            self._update()

    def finished(self, outcome: TaskOutcome) -> None:
        with self._lock:
            self._running.pop(outcome.task, None)
            self._recent.append(outcome)
            self._judged += outcome.judged
            self._passed += outcome.passed
            self._progress.advance(self._bar)
            self._update()
            if not self.console.is_terminal:
                done = int(self._progress.tasks[0].completed)
                reward = f" reward {outcome.reward}" if outcome.judged else ""
                self.note(f"[{done}/{self._progress.tasks[0].total}] {outcome.task} {outcome.status}{reward} "
                          f"{outcome.seconds:.1f} s {outcome.reason[:120]}".rstrip())

    def note(self, text: str) -> None:
        self._live.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _update(self) -> None:
        running = ", ".join(self._running) or "-"
        rate = f"{100 * self._passed / self._judged:.0f}% passed of {self._judged}" if self._judged else "-"
        self._progress.update(self._bar, description=f"bench ({rate}) running: {running[:60]}")
        self._live.update(self._render())

    def _render(self) -> Group:
        table = Table(box=None, pad_edge=False)
        for column in ("task", "level", "status", "reward", "vs eager", "vs compile", "s", "why"):
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=50 if column == "why" else None)
        for o in self._recent:
            table.add_row(o.task, level_cell(o.level), f"[{STATUS_STYLE.get(o.status, 'red')}]{o.status}",
                          reward_cell(o), format_speedup(o.speedup_vs_eager), format_speedup(o.speedup_vs_compile),
                          f"{o.seconds:.1f}", o.reason)
        return Group(self._progress, table)


def final_table(summary: dict, title: str) -> Table:
    table = Table(title=title)
    table.add_column("level")
    for label, _ in SUMMARY_COLUMNS:
        table.add_column(label, justify="right")
    for row in summary_rows(summary):
        table.add_row(*row)
    return table
