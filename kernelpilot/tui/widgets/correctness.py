"""Per-output errors against tolerance, where the mismatches are, and the first mismatching values."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
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


def outputs_table(result: EvalResult) -> Table:
    table = Table(title="outputs vs float64 reference (worst trial)", expand=True, title_justify="left")
    for column in ("out", "shape", "dtype", "max abs", "max rel", "atol", "rtol", "mismatched", "where"):
        table.add_column(column, justify="right" if column not in ("shape", "dtype", "where") else "left")
    for check in result.outputs:
        table.add_row(
            str(check.index), "×".join(map(str, check.shape)), check.dtype,
            Text(_fmt(check.max_abs_err), style="" if check.ok else "bold red"), _fmt(check.max_rel_err),
            _fmt(check.atol), _fmt(check.rtol),
            Text(f"{check.mismatched:,} ({100 * check.mismatched / max(check.numel, 1):.3g}%)",
                 style="green" if check.ok else "red"), index_ranges(check),
        )
    return table


def mismatches_table(check: OutputCheck) -> Table:
    table = Table(title=f"output {check.index}: first mismatching values", title_justify="left")
    for column in ("index", "expected", "actual", "|diff|"):
        table.add_column(column, justify="right")
    for m in check.first_mismatches:
        table.add_row(str(list(m.index)), f"{m.expected:.6g}", f"{m.actual:.6g}", f"{abs(m.actual - m.expected):.3g}")
    return table


def report(result: EvalResult) -> Group:
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
        parts.append(outputs_table(result))
    for check in result.outputs:
        if check.error_grid:
            parts.append(Text(f"\noutput {check.index}: max abs error by block", style="bold"))
            parts.append(heat_map(check))
        if check.first_mismatches:
            parts.append(mismatches_table(check))
    return Group(*parts)


class CorrectnessView(VerticalScroll):
    def compose(self):
        yield Static("Select a candidate to see how its outputs compare.", id="correctness-report")

    def show(self, result: EvalResult) -> None:
        self.query_one("#correctness-report", Static).update(report(result))
