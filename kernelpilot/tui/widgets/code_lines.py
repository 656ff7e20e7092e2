"""Highlighted code drawn through the line API from strips made off the event loop.

Resolving the styles of highlighted code costs about half a millisecond a line on a slow machine: a
widget that renders a whole file or diff on the loop stalls a frame for tens of milliseconds when a
candidate arrives. Here a worker thread turns every line into a strip once (`strips_of`, with the
colours read on the loop beforehand: a worker thread has no active app to resolve `$variables`), and a
frame only crops the lines on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial

from rich.segment import Segment
from textual.content import Content
from textual.geometry import Size
from textual.markup import parse_style
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style


@dataclass(frozen=True)
class Palette:
    """What turning content into strips needs from the app, read on the event loop."""

    base: Style
    variables: dict[str, str]


def strips_of(lines: Sequence[Content], palette: Palette) -> list[Strip]:
    """The lines as strips; from any thread."""
    parse = cache(partial(parse_style, variables=palette.variables))
    return [Strip([Segment(text, style.rich_style) for text, style in line.render(palette.base, "", parse)])
            for line in lines]


def resize_content(view: ScrollView, size: Size) -> None:
    """A new virtual size for a scroll view whose own size does not follow its content (1fr), without
    what setting `virtual_size` costs: a layout of the whole screen, 10–20 ms a frame on a slow machine.
    Only its scrollbars change; they ask for a layout themselves when they appear or go."""
    view.set_reactive(ScrollView.virtual_size, size)
    view._scroll_update(size)
    view.refresh()


class CodeLines(ScrollView, can_focus=True):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.strips: list[Strip] = []

    @property
    def palette(self) -> Palette:
        return Palette(self.visual_style, self.app.get_css_variables())

    def set_strips(self, strips: list[Strip]) -> None:
        self.strips = strips
        resize_content(self, Size(max((strip.cell_length for strip in strips), default=0), len(strips)))

    def replace_line(self, y: int, line: Content) -> None:
        """Redraw one line (a cursor, a mark): cheap enough to do on the loop."""
        self.strips[y] = strips_of([line], self.palette)[0]
        self.refresh_line(y)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width, style = self.scrollable_content_region.width, self.rich_style
        if scroll_y + y >= len(self.strips):
            return Strip.blank(width, style)
        return self.strips[scroll_y + y].crop_extend(scroll_x, scroll_x + width, style)
