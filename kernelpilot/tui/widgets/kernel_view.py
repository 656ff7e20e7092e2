"""The candidate's files with syntax highlighting (in the app theme's colours); a build error's location
is highlighted and scrolled to."""

from __future__ import annotations

from pathlib import PurePath

from textual import work
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Static


def numbered(path: str, code: str, marked_line: int | None = None) -> Content:
    """`code` highlighted by its file type, with line numbers; `marked_line` stands out."""
    lines = highlight(code, path=path).split("\n", allow_blank=True)
    width = len(str(len(lines)))
    rows = []
    for number, line in enumerate(lines, 1):
        row = Content.assemble((f"{number:>{width}} ", "$text-muted"), line)
        rows.append(row.stylize("on $error-muted") if number == marked_line else row)
    return Content("\n").join(rows)


class KernelView(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.files: dict[str, str] = {}
        self._code_views: dict[str, Static] = {}

    def compose(self):
        yield Static("Select a candidate to see its kernels.", classes="placeholder")

    @work(thread=True, exclusive=True, exit_on_error=False, group="highlight")
    def show(self, files: dict[str, str]) -> None:
        """Highlighting runs here, off the event loop (pygments takes a while on the first file of a kind)."""
        # Kernels first: they are what the candidate is about.
        paths = sorted(files, key=lambda p: (not p.startswith("kernels/"), p))
        highlighted = {path: numbered(path, files[path]) for path in paths}
        self.app.call_from_thread(self._show, files, highlighted)

    def _show(self, files: dict[str, str], highlighted: dict[str, Content]) -> None:
        self.files = files
        self.remove_children()
        self._code_views = {path: Static(code) for path, code in highlighted.items()}
        for path, code_view in self._code_views.items():
            self.mount_all([Static(path, classes="file-title"), code_view])

    def show_location(self, path: str, line: int) -> bool:
        """Mark `line` of the file whose name ends like `path`; False when no such file is shown."""
        match = next((p for p in self.files if p == path or p.endswith("/" + PurePath(path).name)), None)
        if match is None:
            return False
        code_view = self._code_views[match]
        code_view.update(numbered(match, self.files[match], marked_line=line))
        self.call_after_refresh(lambda: self.scroll_to(y=code_view.virtual_region.y + line - 5, animate=False))
        return True
