"""The agent transcript: assistant text streamed token by token, tool calls folded until opened.

One widget that draws only its visible lines (Textual's line API), not a widget per entry: a session
holds hundreds of tool calls, and with a widget each every frame laid all of them out again (300 calls
kept the event loop busy for 180 ms at a time while candidates arrived).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from kernelpilot.agent.textproto import without_tool_calls
from kernelpilot.tui.widgets.code_lines import resize_content

TOOL_OUTPUT_LIMIT = 4000
STREAM_REFRESH_S = 0.05
"""New entries and streamed text are drawn at most this often, in one batch: a redraw per token
would swamp the event loop."""


def _summary(arguments: dict[str, Any]) -> str:
    """The first argument, shortened: enough to tell calls apart while folded."""
    first = next(iter(arguments.values()), "")
    text = str(first).replace("\n", " ")
    return text if len(text) <= 48 else text[:47] + "…"


@dataclass(eq=False)
class Entry:
    """One thing said or done; `kind` names its component class (`transcript--<kind>`)."""

    kind: str  # "assistant", "user", "note" or "tool"
    text: str = ""
    tool_name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    ok: bool = True
    expanded: bool = False
    gap: int = 0
    """Blank lines above it: turns and the user's messages stand apart from the notes and calls around them."""
    height: int | None = None
    """How many lines it takes at the transcript's current width; None when it must be measured again."""
    strips: list[Strip] | None = None
    """Its lines as drawn; None until it is first seen, and again when it or the theme changes."""

    def content(self) -> Text:
        if self.kind != "tool":
            return Text(self.text)
        mark = "…" if self.output is None else ("✓" if self.ok else "✗")
        line = Text(f"{'▼' if self.expanded else '▶'} {mark} {self.tool_name} {_summary(self.arguments)}",
                    no_wrap=not self.expanded, overflow="ellipsis")
        if self.expanded:
            line.append("\n" + json.dumps(self.arguments, indent=2), style="dim")
            line.append("\n" + (self.output if self.output is not None else "running…"))
        return line


class Transcript(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--assistant", "transcript--user", "transcript--note", "transcript--tool",
        "transcript--failed", "transcript--selected",
    }
    BINDINGS = [
        Binding("enter", "toggle", "Unfold", show=False, tooltip="fold or unfold the selected tool call"),
        Binding("up", "select(-1)", "Previous call", show=False),
        Binding("down", "select(1)", "Next call", show=False),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.entries: list[Entry] = []
        self._starts: list[int] = []
        self._width = 0
        self._turns: dict[int, Entry] = {}
        self._calls: dict[str, Entry] = {}
        self._pending_user: list[str] = []
        self.selected: Entry | None = None
        self._flush_scheduled = False
        self._follow = True
        """New lines scroll into view until the user scrolls up, and again once they are back at the end. Kept
        apart from where the view is, which a relayout moves: a resumed session's history, laid out at one width
        and again at the next, left the view at its top."""

    # What the session says.

    def add_tokens(self, turn: int, text: str) -> None:
        if turn not in self._turns:
            self._turns[turn] = self._add(Entry("assistant"))
        entry = self._turns[turn]
        entry.text += text
        self._changed(entry)

    def end_turn(self, turn: int, response: dict[str, Any]) -> None:
        """A finished turn: its full text, less the tool calls written as text (they are shown folded),
        replaces the stream (replayed logs have no token deltas)."""
        written = response.get("content") or ""
        content = without_tool_calls(written)
        entry = self._turns.get(turn)
        if entry is None:
            if content:
                self.add_tokens(turn, content)
        elif written and not content:  # the turn was only tool calls
            self.entries.remove(entry)
            self._schedule_flush()
        elif content and entry.text != content:
            entry.text = content
            self._changed(entry)

    def add_tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        self._calls[call_id] = self._add(Entry("tool", tool_name=name, arguments=arguments))

    def add_tool_result(self, call_id: str, name: str, output: str, ok: bool) -> None:
        """The call's result; a result without a call (manual mode's failed evaluations) gets an entry of its own."""
        entry = self._calls.get(call_id) or self._add(Entry("tool", tool_name=name))
        entry.output = output if len(output) <= TOOL_OUTPUT_LIMIT else output[:TOOL_OUTPUT_LIMIT] + "\n…"
        entry.ok = ok
        self._changed(entry)

    def add_user(self, text: str, pending: bool = False) -> None:
        """A steering message; `pending` when shown on send, so the session's echo of it is not shown twice."""
        if not pending and text in self._pending_user:
            self._pending_user.remove(text)
            return
        if pending:
            self._pending_user.append(text)
        self._add(Entry("user", text=f"you › {text}"))

    def add_note(self, text: str) -> None:
        self._add(Entry("note", text=text))

    def _add(self, entry: Entry) -> Entry:
        entry.gap = int(entry.kind in ("assistant", "user") and bool(self.entries))
        self.entries.append(entry)
        self._schedule_flush()
        return entry

    def _changed(self, entry: Entry) -> None:
        entry.height = entry.strips = None
        self._schedule_flush()

    # Drawing: entries are measured to place them, and drawn only when first seen; both are kept until
    # the entry changes (the width, or for drawing the theme).

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(STREAM_REFRESH_S, self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        self._lay_out()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._follow = self.is_vertical_scroll_end

    def _lay_out(self) -> None:
        """Place every entry where the last one ended, measuring those that changed."""
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            for entry in self.entries:
                entry.height = entry.strips = None
        self._starts, line = [], 0
        for entry in self.entries:
            if entry.height is None:
                entry.height = self._measure(entry)
            self._starts.append(line)
            line += entry.height
        resize_content(self, Size(width, line))
        if self._follow:
            self.call_after_refresh(self._keep_following)

    def _keep_following(self) -> None:
        """Once the new size is in place; unless the user moved away meanwhile."""
        if self._follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def _measure(self, entry: Entry) -> int:
        if entry.kind == "tool" and not entry.expanded:
            return entry.gap + 1  # one line, cut to the width
        return entry.gap + len(entry.content().wrap(self.app.console, max(self._width, 1)))

    def _draw(self, entry: Entry) -> list[Strip]:
        """The entry's lines at full width on the widget's background (text wraps, nothing scrolls
        sideways), so that drawing a visible line again is a lookup."""
        style = self.get_component_rich_style(f"transcript--{entry.kind}")
        if entry.kind == "tool" and not entry.ok:
            style += self.get_component_rich_style("transcript--failed")
        console = self.app.console
        lines = console.render_lines(entry.content(), console.options.update_width(max(self._width, 1)),
                                     style=style, pad=False)
        strips = [Strip.blank(0)] * entry.gap + Strip.from_lines(lines)
        return [strip.crop_extend(0, self._width, self.rich_style).apply_style(self.rich_style) for strip in strips]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        for entry in self.entries:
            entry.strips = None
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._lay_out()

    def _locate(self, line: int) -> tuple[int, int] | None:
        """The entry drawn on virtual line `line`, and which of its lines it is."""
        index = bisect_right(self._starts, line) - 1
        return (index, line - self._starts[index]) if index >= 0 else None

    def render_line(self, y: int) -> Strip:
        found = self._locate(self.scroll_offset.y + y)
        if found is None:
            return Strip.blank(self._width, self.rich_style)
        entry = self.entries[found[0]]
        if entry.strips is None:
            entry.strips = self._draw(entry)
        if found[1] >= len(entry.strips):
            return Strip.blank(self._width, self.rich_style)
        strip = entry.strips[found[1]]
        if entry is self.selected and self.has_focus:
            selected = self.get_component_rich_style("transcript--selected")
            return Strip(Segment.apply_style(strip, post_style=selected), strip.cell_length)
        return strip

    # Folding: click a call, or select one with up/down and press enter.

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        found = self._locate(offset.y + self.scroll_offset.y)
        entry = self.entries[found[0]] if found else None
        if entry is not None and entry.kind == "tool":
            self.selected = entry
            self.action_toggle()

    def action_toggle(self) -> None:
        if self.selected is not None:
            self.selected.expanded = not self.selected.expanded
            self._changed(self.selected)

    def action_select(self, step: int) -> None:
        calls = [entry for entry in self.entries if entry.kind == "tool"]
        if not calls:
            self.scroll_relative(y=step, animate=False)
            return
        at = calls.index(self.selected) + step if self.selected in calls else (0 if step > 0 else -1)
        self.selected = calls[max(0, min(at, len(calls) - 1))]
        if len(self._starts) < len(self.entries):  # entries added since the last flush
            self._lay_out()
        top = self._starts[self.entries.index(self.selected)]
        bottom = top + (self.selected.height or 0)
        height = self.scrollable_content_region.height
        if top < self.scroll_offset.y or bottom > self.scroll_offset.y + height:
            self.scroll_to(y=top if bottom - top > height or top < self.scroll_offset.y else bottom - height,
                           animate=False, immediate=True)
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
