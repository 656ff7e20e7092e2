"""Nsight-style timing: eager vs torch.compile vs candidate, per-kernel breakdown, spread, ncu counters,
and speedup over the session's candidates."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Label, Sparkline, Static

from kernelpilot.harness.result import EvalResult, format_speedup

BAR_WIDTH = 32
ROWS = (("eager", "eager"), ("compile", "torch.compile"), ("candidate", "candidate"))


def times_table(result: EvalResult) -> Table:
    table = Table(title="median time (same process, same run)", expand=True, title_justify="left")
    for column in ("", "ms", "spread", ""):
        table.add_column(column, justify="right" if column in ("ms", "spread") else "left")
    longest = max((t for t in result.times_ms.values() if t), default=0.0)
    for key, label in ROWS:
        time_ms = result.times_ms.get(key)
        if time_ms is None:
            table.add_row(label, "—", "—", "")
            continue
        spread = result.spread_pct.get(key)
        bar = "█" * max(1, round(BAR_WIDTH * time_ms / longest))
        table.add_row(label, f"{time_ms:.4f}", "—" if spread is None else f"±{spread:.1f}%",
                      Text(bar, style="green" if key == "candidate" else "blue"))
    return table


def kernels_table(result: EvalResult) -> Table:
    table = Table(title="candidate kernels", expand=True, title_justify="left")
    for column in ("name", "calls", "ms", "% of total"):
        table.add_column(column, justify="left" if column == "name" else "right")
    total = sum(k.time_ms for k in result.kernels) or 1.0
    for kernel in sorted(result.kernels, key=lambda k: -k.time_ms):
        table.add_row(kernel.name, str(kernel.calls), f"{kernel.time_ms:.4f}", f"{100 * kernel.time_ms / total:.1f}")
    return table


def ncu_table(result: EvalResult) -> Table | Text:
    """Nsight Compute's counters per kernel, or why there are none."""
    if result.device != "cuda":
        return Text("ncu: counters are read on CUDA only", style="dim")
    if not result.ncu:
        status = result.protocol.get("ncu", "off (kernelpilot eval --ncu, or ncu = true in the config)")
        return Text(f"ncu: {status}", style="dim")
    table = Table(title="ncu (one forward, kernel replay: counters, not timings)", expand=True, title_justify="left")
    for column in ("kernel", "µs", "DRAM GB/s", "DRAM % peak", "SM % peak", "occupancy", "theoretical"):
        table.add_column(column, justify="left" if column == "kernel" else "right")

    def cell(value: float | None, fmt: str, unit: str = "") -> str:
        return "—" if value is None else format(value, fmt) + unit

    for kernel in result.ncu:
        table.add_row(kernel.name, cell(kernel.duration_us, ".1f"), cell(kernel.dram_gb_per_s, ".0f"),
                      cell(kernel.dram_pct_of_peak, ".1f"), cell(kernel.sm_pct_of_peak, ".1f"),
                      cell(kernel.achieved_occupancy_pct, ".1f", "%"), cell(kernel.theoretical_occupancy_pct, ".1f", "%"))
    return table


def report(result: EvalResult) -> Group:
    head = Text(f"speedup vs eager {format_speedup(result.speedup_vs_eager)}   "
                f"vs torch.compile {format_speedup(result.speedup_vs_compile)}", style="bold")
    parts = [head, times_table(result)]
    if result.kernels:
        parts.append(kernels_table(result))
    parts.append(ncu_table(result))
    return Group(*parts)


class TimingView(VerticalScroll):
    def compose(self):
        yield Label("speedup vs torch.compile over candidates", id="history-label")
        yield Sparkline([], id="history")
        yield Static("Select a candidate to see its timings.", id="timing-report")

    def set_history(self, speedups: list[float]) -> None:
        self.query_one("#history", Sparkline).data = speedups
        best = max(speedups, default=0.0)
        self.query_one("#history-label", Label).update(
            f"speedup vs torch.compile over {len(speedups)} candidates (best {format_speedup(best)})", layout=False)

    def show(self, result: EvalResult) -> None:
        self.query_one("#timing-report", Static).update(report(result))
