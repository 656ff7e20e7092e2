"""Candidate diffs against the previous candidate, the best one, or the accepted state, hunk by hunk,
the code highlighted as its language.

Against the accepted state, hunks can be chosen (space) so that accept takes only those.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.highlight import highlight
from textual.reactive import reactive
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from kernelpilot.session.accept import Hunk, hunks

BASES = ("accepted", "previous", "best")
BASE_LABELS = {"accepted": "the accepted state", "previous": "the previous candidate", "best": "the best candidate"}


LINE_STYLES = {"+": "on $success-muted", "-": "on $error-muted"}


def hunk_body(hunk: Hunk) -> Content:
    """The hunk's lines highlighted as one block of its file's language, added and removed lines tinted
    (to the hunk's widest line, so that the tint reads as a block)."""
    code = highlight("\n".join(line[1:] for line in hunk.lines), path=hunk.path).split("\n", allow_blank=True)
    width = max(map(len, hunk.lines), default=0)
    rows = [Content.assemble(line[:1], highlighted, " " * (width - len(line))).stylize(LINE_STYLES.get(line[:1], ""))
            for line, highlighted in zip(hunk.lines, code, strict=True)]
    return Content("\n").join(rows)


def hunk_prompt(hunk: Hunk, body: Content, chosen: bool) -> Content:
    mark = "[x] " if chosen else "[ ] "
    return Content.assemble((f"{mark}{hunk.path} {hunk.header}", "bold"), "\n", body)


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
        self._bodies: list[Content] = []
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
        hunk = self.hunks[index]
        self.chosen.symmetric_difference_update({hunk.id})
        self.query_one("#hunks", HunkList).replace_option_prompt_at_index(
            index, hunk_prompt(hunk, self._bodies[index], hunk.id in self.chosen))

    def _render_hunks(self) -> None:
        if self.is_mounted:
            self._diff(self.bases.get(self.base, {}), self.files, self.base)

    @work(thread=True, exclusive=True, exit_on_error=False, group="diff")
    def _diff(self, old: dict[str, str], new: dict[str, str], base: str) -> None:
        """Diffing and highlighting run here, off the event loop (pygments takes tens of ms a file)."""
        found = hunks(old, new) if new else []
        self.app.call_from_thread(self._show_hunks, found, [hunk_body(hunk) for hunk in found], base)

    def _show_hunks(self, found: list[Hunk], bodies: list[Content], base: str) -> None:
        self.hunks, self._bodies = found, bodies
        listing = self.query_one("#hunks", HunkList)
        listing.set_options(Option(hunk_prompt(h, body, h.id in self.chosen)) for h, body in zip(found, bodies))
        listing.highlighted = 0 if found else None
        title = f"vs {BASE_LABELS[base]}: {len(found)} hunk{'s' * (len(found) != 1)}"
        if base == "accepted" and found:
            title += " (space chooses hunks; accept takes the chosen ones, or all)"
        if self.files and not found:
            title += " (identical)"
        self.query_one("#diff-title", Label).update(title)
