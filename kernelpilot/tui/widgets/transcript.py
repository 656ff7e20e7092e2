"""The agent transcript: assistant text streamed token by token, tool calls folded until opened."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

TOOL_OUTPUT_LIMIT = 4000
STREAM_REFRESH_S = 0.05
"""New entries and streamed text are drawn at most this often, in one batch: a mount or redraw per
event would swamp the event loop."""


def _summary(arguments: dict[str, Any]) -> str:
    """The first argument, shortened: enough to tell calls apart while folded."""
    first = next(iter(arguments.values()), "")
    text = str(first).replace("\n", " ")
    return text if len(text) <= 48 else text[:47] + "…"


class ToolCallView(Static, can_focus=True):
    """One tool call, folded to a line until clicked (or enter): arguments and output inside.

    A single widget rather than a Collapsible: transcripts hold hundreds of calls.
    """

    BINDINGS = [Binding("enter", "toggle", "Unfold", show=False)]
    expanded: reactive[bool] = reactive(False)

    def __init__(self, name: str, arguments: dict[str, Any]) -> None:
        super().__init__()
        self.tool_name = name
        self.arguments = arguments
        self.output: str | None = None
        self.ok = True

    def finish(self, output: str, ok: bool) -> None:
        self.output = output if len(output) <= TOOL_OUTPUT_LIMIT else output[:TOOL_OUTPUT_LIMIT] + "\n…"
        self.ok = ok
        self.set_class(not ok, "failed")
        self.refresh(layout=self.expanded)

    def render(self) -> Text:
        mark = "…" if self.output is None else ("✓" if self.ok else "✗")
        text = Text(f"{'▼' if self.expanded else '▶'} {mark} {self.tool_name} {_summary(self.arguments)}")
        if self.expanded:
            text.append("\n" + json.dumps(self.arguments, indent=2), style="dim")
            text.append("\n" + (self.output if self.output is not None else "running…"))
        return text

    def on_click(self) -> None:
        self.action_toggle()

    def action_toggle(self) -> None:
        self.expanded = not self.expanded

    def watch_expanded(self) -> None:
        self.refresh(layout=True)


class Transcript(VerticalScroll):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._streamed: dict[int, str] = {}
        self._turn_text: dict[int, Static] = {}
        self._calls: dict[str, ToolCallView] = {}
        self._pending_user: list[str] = []
        self._stale_turns: set[int] = set()
        self._unmounted: list[Widget] = []
        self._flush_scheduled = False

    def _append(self, widget: Widget) -> None:
        self._unmounted.append(widget)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(STREAM_REFRESH_S, self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        follow = self.is_vertical_scroll_end
        if self._unmounted:
            self.mount_all(self._unmounted)
            self._unmounted = []
        for turn in self._stale_turns:
            self._turn_text[turn].update(Text(self._streamed[turn]))
        self._stale_turns.clear()
        if follow:
            self.call_after_refresh(self.scroll_end, animate=False)

    def _turn_static(self, turn: int) -> Static:
        if turn not in self._turn_text:
            self._turn_text[turn] = Static(classes="assistant")
            self._append(self._turn_text[turn])
        return self._turn_text[turn]

    def add_tokens(self, turn: int, text: str) -> None:
        self._streamed[turn] = self._streamed.get(turn, "") + text
        self._turn_static(turn)
        self._stale_turns.add(turn)
        self._schedule_flush()

    def end_turn(self, turn: int, response: dict[str, Any]) -> None:
        """A finished turn: its full text replaces the stream (replayed logs have no token deltas)."""
        content = response.get("content") or ""
        if content and turn not in self._streamed:
            self.add_tokens(turn, content)

    def add_tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        self._calls[call_id] = ToolCallView(name, arguments)
        self._append(self._calls[call_id])

    def add_tool_result(self, call_id: str, output: str, ok: bool) -> None:
        if call_id in self._calls:
            self._calls[call_id].finish(output, ok)

    def add_user(self, text: str, pending: bool = False) -> None:
        """A steering message; `pending` when shown on send, so the session's echo of it is not shown twice."""
        if not pending and text in self._pending_user:
            self._pending_user.remove(text)
            return
        if pending:
            self._pending_user.append(text)
        self._append(Static(Text(f"you › {text}"), classes="user"))

    def add_note(self, text: str) -> None:
        self._append(Static(Text(text), classes="note"))
