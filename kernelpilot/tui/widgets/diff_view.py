"""Candidate diffs against the previous candidate, the best one, or the accepted state, hunk by hunk,
the code highlighted as its language.

Against the accepted state, hunks can be chosen (space) so that accept takes only those — in a live
session: a read-only one (`sessions show`) has nothing to accept them into.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region
from textual.highlight import highlight
from textual.reactive import reactive
from textual.strip import Strip
from textual.widgets import Label

from kernelpilot.session.accept import Hunk, hunks
from kernelpilot.tui.widgets.code_lines import CodeLines, Palette, strips_of

BASES = ("accepted", "previous", "best")
BASE_LABELS = {"accepted": "the accepted state", "previous": "the previous candidate", "best": "the best candidate"}


LINE_STYLES = {"+": "on $success-muted", "-": "on $error-muted"}


def hunk_body(hunk: Hunk) -> list[Content]:
    """The hunk's lines highlighted as one block of its file's language, added and removed lines tinted
    (to the hunk's widest line, so that the tint reads as a block)."""
    code = highlight("\n".join(line[1:] for line in hunk.lines), path=hunk.path).split("\n", allow_blank=True)
    width = max(map(len, hunk.lines), default=0)
    return [Content.assemble(line[:1], highlighted, " " * (width - len(line))).stylize(LINE_STYLES.get(line[:1], ""))
            for line, highlighted in zip(hunk.lines, code, strict=True)]


def hunk_header(hunk: Hunk, chosen: bool, current: bool, choosing: bool) -> Content:
    """The hunk's path and range, with its box ([x] chosen) where hunks can be chosen."""
    mark = ("[x] " if chosen else "[ ] ") if choosing else ""
    return Content.styled(f"{mark}{hunk.path} {hunk.header}", "bold reverse" if current else "bold")


class HunkList(CodeLines):
    """Each hunk's header, then its lines; the cursor moves from hunk to hunk."""

    BINDINGS = [
        Binding("up", "move(-1)", "Previous hunk", show=False),
        Binding("down", "move(1)", "Next hunk", show=False),
        Binding("space", "toggle_hunk", "Choose hunk", id="toggle_hunk"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.hunks: list[Hunk] = []
        self.starts: list[int] = []
        """The line of each hunk's header."""
        self.chosen: set[str] = set()
        self.cursor: int | None = None
        self.choosing = False
        """Whether the hunks shown can be chosen (set with them)."""

    def show(self, found: list[Hunk], strips: list[Strip], choosing: bool) -> None:
        self.hunks, self.chosen, self.cursor, self.choosing = found, set(), None, choosing
        self.starts = list(accumulate((len(hunk.lines) + 1 for hunk in found), initial=0))[:len(found)]
        self.set_strips(strips)
        self.scroll_home(animate=False)
        self.move_to(0 if found else None)

    def move_to(self, index: int | None) -> None:
        previous, self.cursor = self.cursor, index
        for redrawn in {previous, index} - {None}:
            self._redraw_header(redrawn)
        if index is not None:
            start = self.starts[index]
            self.scroll_to_region(Region(0, start, 1, len(self.hunks[index].lines) + 1), animate=False, top=False)

    def _redraw_header(self, index: int) -> None:
        hunk = self.hunks[index]
        self.replace_line(self.starts[index],
                          hunk_header(hunk, hunk.id in self.chosen, index == self.cursor, self.choosing))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_hunk":
            return (bool(self.hunks) or None) if self.choosing else False
        return True

    def action_move(self, step: int) -> None:
        if self.cursor is not None:
            self.move_to(min(max(self.cursor + step, 0), len(self.hunks) - 1))

    def action_toggle_hunk(self) -> None:
        if self.cursor is not None:
            self.chosen.symmetric_difference_update({self.hunks[self.cursor].id})
            self._redraw_header(self.cursor)

    def on_click(self, event: events.Click) -> None:
        index = bisect_right(self.starts, event.y + self.scroll_offset.y) - 1
        if index >= 0:
            self.move_to(index)


class DiffView(Vertical):
    base: reactive[str] = reactive("accepted")

    def __init__(self, choosable: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.choosable = choosable
        """False in a read-only session: nothing to accept chosen hunks into."""
        self.files: dict[str, str] = {}
        self.bases: dict[str, dict[str, str]] = {name: {} for name in BASES}

    def compose(self) -> ComposeResult:
        yield Label("Select a candidate to see its diff.", id="diff-title")
        yield HunkList(id="hunks")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _: self._render_hunks())

    @property
    def hunks(self) -> list[Hunk]:
        return self.query_one(HunkList).hunks

    @property
    def chosen(self) -> set[str]:
        return self.query_one(HunkList).chosen

    def show(self, files: dict[str, str], bases: dict[str, dict[str, str]]) -> None:
        self.files, self.bases = files, bases
        self._render_hunks()

    def cycle_base(self) -> None:
        self.base = BASES[(BASES.index(self.base) + 1) % len(BASES)]

    def watch_base(self) -> None:
        self._render_hunks()

    def _render_hunks(self) -> None:
        if self.is_mounted:
            self._diff(self.bases.get(self.base, {}), self.files, self.base, self.query_one(HunkList).palette)

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff")
    def _diff(self, old: dict[str, str], new: dict[str, str], base: str, palette: Palette) -> None:
        """Diffing, highlighting and styling run here, off the event loop (pygments takes tens of ms a file)."""
        found = hunks(old, new) if new else []
        choosing = self.choosable and base == "accepted"
        lines = [line for hunk in found for line in (hunk_header(hunk, False, False, choosing), *hunk_body(hunk))]
        self.app.call_from_thread(self._show_hunks, found, strips_of(lines, palette), base, choosing)

    def _show_hunks(self, found: list[Hunk], strips: list[Strip], base: str, choosing: bool) -> None:
        self.query_one(HunkList).show(found, strips, choosing)
        title = f"vs {BASE_LABELS[base]}: {len(found)} hunk{'s' * (len(found) != 1)}"
        if choosing and found:
            title += " · space chooses"  # fits an 80-column terminal's pane; accept takes the chosen, or all
        if self.files and not found:
            title += " (identical)"
        self.query_one("#diff-title", Label).update(title, layout=False)
