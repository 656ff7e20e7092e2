"""Per-output errors against tolerance, where the mismatches are, and the first mismatching values."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from kernelpilot.harness.result import EvalResult, OutputCheck

HEAT = ((0.1, "#1f5130"), (1.0, "#3fa45b"), (10.0, "#d6a21e"), (float("inf"), "#d9402b"))
"""Cell colour by error / atol: well within, within, up to 10× over, beyond."""


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def index_ranges(check: OutputCheck) -> str:
    """The box the first mismatches fall in, per dimension: `[0:3, 5:2047]`."""
    if not check.first_mismatches:
        return "—"
    dims = zip(*(m.index for m in check.first_mismatches))
    return "[" + ", ".join(f"{min(d)}:{max(d)}" if min(d) != max(d) else str(min(d)) for d in dims) + "]"


def heat_map(check: OutputCheck) -> Text:
    """The error grid as coloured cells, with a legend."""
    text = Text()
    for row in check.error_grid:
        for error in row:
            ratio = error / check.atol if check.atol else float("inf") * (error > 0)
            colour = next(c for limit, c in HEAT if ratio <= limit)
            text.append("██", style=colour)
        text.append("\n")
    text.append("≤0.1×tol ", style=HEAT[0][1]).append("≤tol ", style=HEAT[1][1])
    text.append("≤10×tol ", style=HEAT[2][1]).append(">10×tol", style=HEAT[3][1])
    return text


OUTPUT_FIELDS = ("out", "shape", "dtype", "max abs", "max rel", "atol", "rtol", "mismatched", "where")
LEFT_ALIGNED = ("shape", "dtype", "where")


def output_row(check: OutputCheck) -> list[str | Text]:
    """One output's check, field by field (`OUTPUT_FIELDS`)."""
    return [
        str(check.index), "×".join(map(str, check.shape)), check.dtype,
        Text(_fmt(check.max_abs_err), style="" if check.ok else "bold red"), _fmt(check.max_rel_err),
        _fmt(check.atol), _fmt(check.rtol),
        Text(f"{check.mismatched:,} ({100 * check.mismatched / max(check.numel, 1):.3g}%)",
             style="green" if check.ok else "red"), index_ranges(check),
    ]


def outputs_table(result: EvalResult, compact: bool = False) -> Table:
    """A row per output; compact (a narrow terminal), a column per output, its fields down the side."""
    table = Table(title="outputs vs float64 reference (worst trial)", expand=True, title_justify="left")
    rows = [output_row(check) for check in result.outputs]
    if compact:
        table.add_column("", style="bold")
        for check in result.outputs:
            table.add_column(f"output {check.index}")
        for field, *values in zip(OUTPUT_FIELDS[1:], *(row[1:] for row in rows)):
            table.add_row(field, *values)
        return table
    for column in OUTPUT_FIELDS:
        table.add_column(column, justify="left" if column in LEFT_ALIGNED else "right")
    for row in rows:
        table.add_row(*row)
    return table


def mismatches_table(check: OutputCheck) -> Table:
    table = Table(title=f"output {check.index}: first mismatching values", title_justify="left")
    for column in ("index", "expected", "actual", "|diff|"):
        table.add_column(column, justify="right")
    for m in check.first_mismatches:
        table.add_row(str(list(m.index)), f"{m.expected:.6g}", f"{m.actual:.6g}", f"{abs(m.actual - m.expected):.3g}")
    return table


def report(result: EvalResult, compact: bool = False) -> Group:
    parts: list = []
    verdict = {"correct": ("correct", "bold green"), "wrong": ("wrong results", "bold red"),
               "guard_violation": ("guard violation", "bold magenta"),
               "build_failed": ("build failed", "bold yellow")}[result.status]
    parts.append(Text(f"{verdict[0]}   max abs {_fmt(result.max_abs_err)}   max rel {_fmt(result.max_rel_err)}",
                      style=verdict[1]))
    parts += [Text(f"✗ {v.check}: {v.detail}", style="magenta") for v in result.violations]
    if result.error:
        parts.append(Text(result.error, style="red"))
    if result.outputs:
        parts.append(outputs_table(result, compact))
    for check in result.outputs:
        if check.error_grid:
            parts.append(Text(f"\noutput {check.index}: max abs error by block", style="bold"))
            parts.append(heat_map(check))
        if check.first_mismatches:
            parts.append(mismatches_table(check))
    return Group(*parts)


COMPACT_BELOW = 90
"""Widths (in cells) below which the outputs table turns on its side: nine columns do not fit."""


class CorrectnessView(VerticalScroll):
    compact: reactive[bool] = reactive(False, init=False)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.result: EvalResult | None = None

    def compose(self):
        yield Static("Select a candidate to see how its outputs compare.", id="correctness-report")

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW

    def watch_compact(self) -> None:
        if self.result is not None:
            self.show(self.result)

    def show(self, result: EvalResult) -> None:
        self.result = result
        self.query_one("#correctness-report", Static).update(report(result, self.compact))
