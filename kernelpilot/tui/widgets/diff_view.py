"""Candidate diffs against the previous candidate, the best one, or the accepted state, hunk by hunk.

Against the accepted state, hunks can be chosen (space) so that accept takes only those.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from kernelpilot.session.accept import Hunk, hunks

BASES = ("accepted", "previous", "best")
BASE_LABELS = {"accepted": "the accepted state", "previous": "the previous candidate", "best": "the best candidate"}


def hunk_text(hunk: Hunk, chosen: bool) -> Text:
    text = Text()
    text.append(("[x] " if chosen else "[ ] ") + f"{hunk.path} {hunk.header}\n", style="bold")
    for line in hunk.lines:
        style = {"+": "green", "-": "red"}.get(line[:1], "")
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


class HunkList(OptionList):
    """One option per hunk: a single line-based widget stays cheap to draw with many long hunks."""

    BINDINGS = [Binding("space", "toggle_hunk", "Choose hunk", id="toggle_hunk")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_hunk":
            return self.parent.base == "accepted" and bool(self.parent.hunks) or None
        return True

    def action_toggle_hunk(self) -> None:
        self.parent.toggle(self.highlighted)


class DiffView(Vertical):
    base: reactive[str] = reactive("accepted")

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.files: dict[str, str] = {}
        self.bases: dict[str, dict[str, str]] = {name: {} for name in BASES}
        self.hunks: list[Hunk] = []
        self.chosen: set[str] = set()

    def compose(self) -> ComposeResult:
        yield Label("Select a candidate to see its diff.", id="diff-title")
        yield HunkList(id="hunks")

    def show(self, files: dict[str, str], bases: dict[str, dict[str, str]]) -> None:
        self.files, self.bases = files, bases
        self.chosen.clear()
        self._render_hunks()

    def cycle_base(self) -> None:
        self.base = BASES[(BASES.index(self.base) + 1) % len(BASES)]

    def watch_base(self) -> None:
        self.chosen.clear()
        self._render_hunks()

    def toggle(self, index: int | None) -> None:
        if index is None or self.base != "accepted":
            return
        hunk_id = self.hunks[index].id
        self.chosen.symmetric_difference_update({hunk_id})
        self.query_one("#hunks", HunkList).replace_option_prompt_at_index(
            index, hunk_text(self.hunks[index], hunk_id in self.chosen))

    def _render_hunks(self) -> None:
        if not self.is_mounted:
            return
        self.hunks = hunks(self.bases.get(self.base, {}), self.files) if self.files else []
        listing = self.query_one("#hunks", HunkList)
        listing.set_options(Option(hunk_text(h, h.id in self.chosen)) for h in self.hunks)
        listing.highlighted = 0 if self.hunks else None
        title = f"vs {BASE_LABELS[self.base]}: {len(self.hunks)} hunk{'s' * (len(self.hunks) != 1)}"
        if self.base == "accepted" and self.hunks:
            title += " (space chooses hunks; accept takes the chosen ones, or all)"
        if self.files and not self.hunks:
            title += " (identical)"
        self.query_one("#diff-title", Label).update(title)
