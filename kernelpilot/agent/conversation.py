"""The messages the model sees, built the same way live and when a session is resumed from its log.

Tool results go back as `tool` messages when the assistant called tools natively, and as one user
message when the calls came as fenced JSON in its text (models without native tool calling).
"""

from __future__ import annotations

from typing import Any

from kernelpilot.session.contexts import TurnContexts
from kernelpilot.session.events import LLMTurn, SessionEvent, ToolResult, UserMessage

NUDGE = "Continue with a tool call. When you are finished, call `done`."
INTERRUPTED = "interrupted: the session stopped before this tool finished; run it again if you still need it"


class Conversation:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = list(messages)
        self._native = True
        self._pending: dict[str, str] = {}
        """Tool calls of the last assistant message still without a result: id → name."""

    def add_assistant(self, message: dict[str, Any], calls: list[dict[str, Any]]) -> None:
        """`calls`: the tool calls to answer (native ones, or those parsed from the text)."""
        self.messages.append(message)
        self._native = bool(message.get("tool_calls"))
        self._pending = {call["id"]: call["function"]["name"] for call in calls}

    def add_tool_result(self, call_id: str, name: str, output: str) -> None:
        self._pending.pop(call_id, None)
        if self._native:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": output})
            return
        text = f"Result of `{name}` ({call_id}):\n{output}"
        last = self.messages[-1]
        if last["role"] == "user" and last.get("tool_results"):
            last["content"] += "\n\n" + text
        else:
            self.messages.append({"role": "user", "content": text, "tool_results": True})

    def add_user(self, text: str) -> None:
        self.close_pending()
        self.messages.append({"role": "user", "content": text})

    def close_pending(self) -> None:
        """Answer calls that never got a result (a session killed mid-tool), as providers require."""
        for call_id, name in list(self._pending.items()):
            self.add_tool_result(call_id, name, INTERRUPTED)

    def ready_for_model(self) -> list[dict[str, Any]]:
        """The messages to send: pending calls closed, a nudge if the model's last word asked for nothing."""
        self.close_pending()
        last = self.messages[-1]
        if last["role"] == "assistant":
            self.messages.append({"role": "user", "content": NUDGE})
        return [{k: v for k, v in m.items() if k != "tool_results"} for m in self.messages]

    @classmethod
    def rebuild(cls, initial: list[dict[str, Any]], events: list[SessionEvent], parse_calls,
                contexts: TurnContexts) -> Conversation:
        """The conversation as it stood after `events`; `parse_calls(message, turn)` finds text tool calls.

        Each turn's context comes from the log (through `contexts`, which this leaves positioned after the last
        turn, ready to store the next), so a resumed model sees exactly what the log says it saw.
        """
        conversation = cls(initial)
        for event in events:
            if isinstance(event, LLMTurn):
                conversation.messages = [dict(m) for m in contexts.context_of(event)]
                conversation.add_assistant(event.response, parse_calls(event.response, event.turn))
            elif isinstance(event, ToolResult):
                conversation.add_tool_result(event.call_id, event.name, event.output)
            elif isinstance(event, UserMessage):
                conversation.add_user(event.text)
        return conversation
