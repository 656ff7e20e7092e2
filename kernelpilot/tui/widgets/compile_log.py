"""Compiler output as it is produced; `file:line` locations link to the kernel view."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import RichLog

LOCATION = re.compile(r"(?P<path>[\w./-]+\.(?:cu|cuh|cpp|cc|h|hpp|py))[:(](?P<line>\d+)")


def linked(line: str) -> Text:
    """The line with each source location clickable (the log's `show_source(path, line)`)."""
    text = Text(line, style="red" if "error" in line.lower() else "")
    for match in LOCATION.finditer(line):
        action = f"show_source({match['path']!r}, {int(match['line'])})"
        text.stylize(Style(underline=True, meta={"@click": action}), match.start(), match.end())
    return text


class CompileLog(RichLog):
    """A click on a `file:line` posts `CompileLog.SourceClicked`."""

    @dataclass
    class SourceClicked(Message):
        log: CompileLog
        path: str
        line: int

        @property
        def control(self) -> CompileLog:
            return self.log

    MIN_WIDTH = 20
    """Lines wrap at the pane's width down to this (RichLog's own minimum, 78, cut a compiler's error messages
    past the right edge of an 80-column terminal's pane)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, min_width=self.MIN_WIDTH, **kwargs)
        self.candidate_id: int | None = None

    def add_line(self, candidate_id: int, line: str) -> None:
        """A live line; a new candidate's build starts a fresh log."""
        if candidate_id != self.candidate_id:
            self.show(candidate_id, "")
        self.write(linked(line.rstrip("\n")))

    def show(self, candidate_id: int, log: str) -> None:
        self.clear()
        self.candidate_id = candidate_id
        self.write(Text(f"build of candidate {candidate_id}", style="bold"))
        for line in log.splitlines():
            self.write(linked(line))

    def action_show_source(self, path: str, line: int) -> None:
        self.post_message(self.SourceClicked(self, path, line))
