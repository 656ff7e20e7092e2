"""Every evaluated candidate: status, speedups vs eager and vs torch.compile, best / accepted marks."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from kernelpilot.harness.result import EvalResult

STATUS_STYLE = {
    "correct": ("correct", "green"),
    "wrong": ("wrong", "red"),
    "guard_violation": ("guard violation", "magenta"),
    "build_failed": ("build failed", "yellow"),
}


def _speedup(value: float | None) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(f"{value:.2f}×", style="green" if value > 1.05 else ("red" if value < 0.95 else ""))


class CandidatesTable(DataTable):
    """Rows keyed by candidate id; the app keeps results here, in evaluation order."""

    def __init__(self, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.results: dict[int, EvalResult] = {}
        self.commits: dict[int, str] = {}
        self.marks: dict[int, str] = {}
        self.best_id: int | None = None

    def on_mount(self) -> None:
        self.add_column("#", key="id", width=4)
        self.add_column("status", key="status", width=16)
        self.add_column("vs eager", key="eager", width=9)
        self.add_column("vs compile", key="compile", width=10)
        self.add_column("reward", key="reward", width=6)
        self.add_column("", key="mark", width=18)

    def add_candidate(self, candidate_id: int, commit: str, result: EvalResult) -> None:
        self.results[candidate_id] = result
        self.commits[candidate_id] = commit
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
            text.append("★ best ", style="bold yellow")
        if mark := self.marks.get(candidate_id):
            text.append(mark, style="bold cyan" if mark == "accepted" else "dim")
        return text

    def _refresh_mark(self, candidate_id: int) -> None:
        if candidate_id in self.results:
            self.update_cell(str(candidate_id), "mark", self._mark_text(candidate_id))
