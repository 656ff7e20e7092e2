"""Every evaluated candidate: status, speedups vs eager and vs torch.compile, best / accepted marks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text
from textual import events, on
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable

from kernelpilot.harness.result import EvalResult, format_speedup
from kernelpilot.session.state import ACCEPTED, CandidateRecord

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
    """A view of the session's candidates (rows keyed by candidate id, in evaluation order): `show` draws what
    changed; moving the cursor posts `CandidatesTable.Highlighted`."""

    compact: reactive[bool] = reactive(False, init=False)

    @dataclass
    class Highlighted(Message):
        """The cursor is on this candidate."""

        table: CandidatesTable
        candidate_id: int

        @property
        def control(self) -> CandidatesTable:
            return self.table

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._rows: dict[int, EvalResult] = {}
        self._marks: dict[int, Text] = {}
        """What each row shows: drawn again only where it changed."""
        self._best_id: int | None = None
        self._candidate_marks: dict[int, str] = {}

    def on_mount(self) -> None:
        self._add_columns()

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW

    def watch_compact(self) -> None:
        """Columns are laid out once: the table is built again with the other set, the cursor kept."""
        selected = self.selected_id
        self.clear(columns=True)
        self._add_columns()
        for candidate_id, result in self._rows.items():
            self._add_row(candidate_id, result)
        if selected is not None:
            self.select(selected)

    def _add_columns(self) -> None:
        for key, (label, width) in (COMPACT_COLUMNS if self.compact else COLUMNS).items():
            self.add_column(label, key=key, width=width)

    def show(self, candidates: Mapping[int, CandidateRecord], best_id: int | None, marks: Mapping[int, str]) -> None:
        """Draw the candidates: new rows added, marks (★ best, accepted / rejected) redrawn where they changed."""
        self._best_id, self._candidate_marks = best_id, dict(marks)
        for candidate_id, record in candidates.items():
            if candidate_id not in self._rows:
                self._rows[candidate_id] = record.result
                self._add_row(candidate_id, record.result)
        for candidate_id in self._rows:
            mark = self._mark_text(candidate_id)
            if mark != self._marks.get(candidate_id):
                self._marks[candidate_id] = mark
                self.update_cell(str(candidate_id), "mark", mark)

    def _add_row(self, candidate_id: int, result: EvalResult) -> None:
        label, style = STATUS_STYLE[result.status]
        mark = self._marks[candidate_id] = self._mark_text(candidate_id)
        self.add_row(
            Text(str(candidate_id)), Text(label, style=style), _speedup(result.speedup_vs_eager),
            _speedup(result.speedup_vs_compile), Text(f"{result.reward:+d}"), mark, key=str(candidate_id),
        )

    @property
    def selected_id(self) -> int | None:
        if not self._rows or self.cursor_row < 0:
            return None
        return int(self.coordinate_to_cell_key((self.cursor_row, 0)).row_key.value)

    def select(self, candidate_id: int) -> None:
        """Put the cursor on a candidate (its views follow the highlight)."""
        if candidate_id in self._rows:
            self.move_cursor(row=self.get_row_index(str(candidate_id)))

    def _mark_text(self, candidate_id: int) -> Text:
        text = Text()
        if candidate_id == self._best_id:
            text.append("★ " if self.compact else "★ best ", style="bold yellow")
        if mark := self._candidate_marks.get(candidate_id):
            text.append(mark, style="bold cyan" if mark == ACCEPTED else "dim")
        return text

    @on(DataTable.RowHighlighted)
    def _on_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(self, int(event.row_key.value)))
