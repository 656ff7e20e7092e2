"""The agent transcript: assistant text streamed token by token, tool calls folded until opened."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Collapsible, Static

TOOL_OUTPUT_LIMIT = 4000
STREAM_REFRESH_S = 0.05
"""Streamed text is redrawn at most this often: a redraw per token would swamp the event loop."""


def _summary(arguments: dict[str, Any]) -> str:
    """The first argument, shortened: enough to tell calls apart while folded."""
    first = next(iter(arguments.values()), "")
    text = str(first).replace("\n", " ")
    return text if len(text) <= 48 else text[:47] + "…"


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { padding: 0 1; }
    Transcript > .assistant { margin: 1 0 0 0; }
    Transcript > .user { margin: 1 0 0 0; color: $accent; text-style: bold; }
    Transcript > .note { color: $text-muted; }
    Transcript Collapsible { margin: 0; padding: 0; border-top: none; }
    Transcript Collapsible.failed CollapsibleTitle { color: $error; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._streamed: dict[int, str] = {}
        self._turn_text: dict[int, Static] = {}
        self._calls: dict[str, tuple[Collapsible, Static]] = {}
        self._pending_user: list[str] = []
        self._stale_turns: set[int] = set()

    def _append(self, widget) -> None:
        follow = self.is_vertical_scroll_end
        self.mount(widget)
        if follow:
            self.scroll_end(animate=False)

    def _turn_static(self, turn: int) -> Static:
        if turn not in self._turn_text:
            self._turn_text[turn] = Static(classes="assistant")
            self._append(self._turn_text[turn])
        return self._turn_text[turn]

    def add_tokens(self, turn: int, text: str) -> None:
        self._streamed[turn] = self._streamed.get(turn, "") + text
        if not self._stale_turns:
            self.set_timer(STREAM_REFRESH_S, self._redraw_stream)
        self._stale_turns.add(turn)

    def _redraw_stream(self) -> None:
        follow = self.is_vertical_scroll_end
        for turn in self._stale_turns:
            self._turn_static(turn).update(Text(self._streamed[turn]))
        self._stale_turns.clear()
        if follow:
            self.scroll_end(animate=False)

    def end_turn(self, turn: int, response: dict[str, Any]) -> None:
        """A finished turn: its full text replaces the stream (replayed logs have no token deltas)."""
        content = response.get("content") or ""
        if content and turn not in self._streamed:
            self._turn_static(turn).update(Text(content))

    def add_tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        output = Static(Text("running…"), classes="output")
        arguments_view = Static(Text(json.dumps(arguments, indent=2)), classes="arguments")
        call = Collapsible(arguments_view, output, title=f"{name} {_summary(arguments)}", collapsed=True)
        self._calls[call_id] = (call, output)
        self._append(call)

    def add_tool_result(self, call_id: str, output: str, ok: bool) -> None:
        if call_id not in self._calls:
            return
        call, output_view = self._calls[call_id]
        shown = output if len(output) <= TOOL_OUTPUT_LIMIT else output[:TOOL_OUTPUT_LIMIT] + "\n…"
        output_view.update(Text(shown))
        call.title = ("✓ " if ok else "✗ ") + call.title
        call.set_class(not ok, "failed")

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
