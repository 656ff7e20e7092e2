"""The candidate's files with syntax highlighting (in the app theme's colours), kernels first; a build
error's location is highlighted and scrolled to."""

from __future__ import annotations

from pathlib import PurePath

from textual import work
from textual.content import Content
from textual.highlight import highlight
from textual.strip import Strip

from kernelpilot.tui.widgets.code_lines import CodeLines, Palette, strips_of

PLACEHOLDER = "Select a candidate to see its kernels."


def numbered(path: str, code: str) -> list[Content]:
    """`code` highlighted by its file type, with line numbers."""
    lines = highlight(code, path=path).split("\n", allow_blank=True)
    width = len(str(len(lines)))
    return [Content.assemble((f"{number:>{width}} ", "$text-muted"), line) for number, line in enumerate(lines, 1)]


class KernelView(CodeLines):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.files: dict[str, str] = {}
        self._numbered: list[Content] = []
        self._starts: dict[str, int] = {}
        """The line of each file's first line of code."""
        self._marked: int | None = None

    def on_mount(self) -> None:
        self._restyle()
        self.app.theme_changed_signal.subscribe(self, lambda _: self._restyle())

    def _restyle(self) -> None:
        if self.files:
            self.show(self.files)
        else:
            self.set_strips(strips_of([Content.styled(PLACEHOLDER, "$text-muted")], self.palette))

    def show(self, files: dict[str, str]) -> None:
        self._highlight(files, self.palette)

    @work(thread=True, exclusive=True, exit_on_error=False, group="highlight")
    def _highlight(self, files: dict[str, str], palette: Palette) -> None:
        """Highlighting and styling run here, off the event loop (pygments takes a while on the first file of
        a kind)."""
        lines: list[Content] = []
        starts: dict[str, int] = {}
        for path in sorted(files, key=lambda p: (not p.startswith("kernels/"), p)):
            lines.append(Content.styled(path, "bold $accent"))
            starts[path] = len(lines)
            lines.extend(numbered(path, files[path]))
            lines.append(Content(""))
        self.app.call_from_thread(self._show, files, lines, starts, strips_of(lines, palette))

    def _show(self, files: dict[str, str], lines: list[Content], starts: dict[str, int], strips: list[Strip]) -> None:
        self.files, self._numbered, self._starts, self._marked = files, lines, starts, None
        self.set_strips(strips)
        self.scroll_home(animate=False)

    def show_location(self, path: str, line: int) -> bool:
        """Mark `line` of the file whose name ends like `path`; False when no such file is shown."""
        match = next((p for p in self.files if p == path or p.endswith("/" + PurePath(path).name)), None)
        if match is None:
            return False
        if self._marked is not None:
            self.replace_line(self._marked, self._numbered[self._marked])
        self._marked = self._starts[match] + min(max(line, 1), len(self.files[match].splitlines()) or 1) - 1
        self.replace_line(self._marked, self._numbered[self._marked].stylize("on $error-muted"))
        self.call_after_refresh(lambda: self.scroll_to(y=self._marked - 5, animate=False))
        return True
