"""Every evaluated candidate: status, speedups vs eager and vs torch.compile, best / accepted marks."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.reactive import reactive
from textual.widgets import DataTable

from kernelpilot.harness.result import EvalResult, format_speedup

STATUS_STYLE = {
    "correct": ("correct", "green"),
    "wrong": ("wrong", "red"),
    "guard_violation": ("guard violation", "magenta"),
    "build_failed": ("build failed", "yellow"),
}


def _speedup(value: float | None) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(format_speedup(value), style="green" if value > 1.05 else ("red" if value < 0.95 else ""))


COLUMNS = {"id": ("#", 4), "status": ("status", 16), "eager": ("vs eager", 9), "compile": ("vs compile", 10),
           "reward": ("reward", 6), "mark": ("", 18)}
"""Column key → label and width."""

COMPACT_COLUMNS = {"id": ("#", 3), "status": ("status", 15), "eager": ("eager", 5), "compile": ("compile", 7),
                   "reward": ("R", 2), "mark": ("", 10)}
"""The same columns in 54 cells: an 80-column terminal's right pane."""

COMPACT_BELOW = 70
"""Widths (in cells) below which the table takes its compact columns."""


class CandidatesTable(DataTable):
    """Rows keyed by candidate id; the app keeps results here, in evaluation order."""

    compact: reactive[bool] = reactive(False, init=False)

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.results: dict[int, EvalResult] = {}
        self.commits: dict[int, str] = {}
        self.marks: dict[int, str] = {}
        self.best_id: int | None = None

    def on_mount(self) -> None:
        self._add_columns()

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW

    def watch_compact(self) -> None:
        """Columns are laid out once: the table is built again with the other set, the cursor kept."""
        selected = self.selected_id
        self.clear(columns=True)
        self._add_columns()
        for candidate_id, result in self.results.items():
            self._add_row(candidate_id, result)
        if selected is not None:
            self.select(selected)

    def _add_columns(self) -> None:
        for key, (label, width) in (COMPACT_COLUMNS if self.compact else COLUMNS).items():
            self.add_column(label, key=key, width=width)

    def add_candidate(self, candidate_id: int, commit: str, result: EvalResult) -> None:
        self.results[candidate_id] = result
        self.commits[candidate_id] = commit
        self._add_row(candidate_id, result)

    def _add_row(self, candidate_id: int, result: EvalResult) -> None:
        label, style = STATUS_STYLE[result.status]
        self.add_row(
            Text(str(candidate_id)), Text(label, style=style), _speedup(result.speedup_vs_eager),
            _speedup(result.speedup_vs_compile), Text(f"{result.reward:+d}"), self._mark_text(candidate_id),
            key=str(candidate_id),
        )

    def previous_id(self, candidate_id: int) -> int | None:
        ids = list(self.results)
        position = ids.index(candidate_id)
        return ids[position - 1] if position > 0 else None

    @property
    def selected_id(self) -> int | None:
        if not self.results or self.cursor_row < 0:
            return None
        return int(self.coordinate_to_cell_key((self.cursor_row, 0)).row_key.value)

    def select(self, candidate_id: int) -> None:
        """Put the cursor on a candidate (its views follow the highlight)."""
        if candidate_id in self.results:
            self.move_cursor(row=self.get_row_index(str(candidate_id)))

    def set_best(self, candidate_id: int | None) -> None:
        old, self.best_id = self.best_id, candidate_id
        for changed in {old, candidate_id} - {None}:
            self._refresh_mark(changed)

    def set_mark(self, candidate_id: int, mark: str | None) -> None:
        if mark is None:
            self.marks.pop(candidate_id, None)
        else:
            self.marks[candidate_id] = mark
        self._refresh_mark(candidate_id)

    def _mark_text(self, candidate_id: int) -> Text:
        text = Text()
        if candidate_id == self.best_id:
            text.append("★ " if self.compact else "★ best ", style="bold yellow")
        if mark := self.marks.get(candidate_id):
            text.append(mark, style="bold cyan" if mark == "accepted" else "dim")
        return text

    def _refresh_mark(self, candidate_id: int) -> None:
        if candidate_id in self.results:
            self.update_cell(str(candidate_id), "mark", self._mark_text(candidate_id))
