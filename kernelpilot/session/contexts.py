"""Each LLM turn's full request context, from a log that stores every message once.

An `LLMTurn` stores only the messages new since the previous turn (`new_messages`): the previous context and its
response are already in the log. The writer (the agent loop) and every reader (resume, finetune's trajectories)
go through `TurnContexts`, so the two cannot disagree on what the model saw.
"""

from __future__ import annotations

from typing import Any

from kernelpilot.errors import SessionError
from kernelpilot.session.events import LLMTurn

Message = dict[str, Any]


class TurnContexts:
    """Follows a session's turns in log order; `context_of` reads one, `stored` writes one.

    Both remember the turn's context and response, which the next turn's `new_messages` extend.
    """

    def __init__(self) -> None:
        self._seen: list[Message] = []
        """The last turn's context followed by its response."""

    @classmethod
    def after(cls, turns: list[LLMTurn]) -> TurnContexts:
        """Positioned after `turns` (a resumed session's), ready to store the next one."""
        contexts = cls()
        for turn in turns:
            contexts.context_of(turn)
        return contexts

    def context_of(self, turn: LLMTurn) -> list[Message]:
        """The full request context of `turn`, the next turn of the log."""
        if turn.messages is not None:
            context = list(turn.messages)
        elif turn.new_messages is not None:
            context = [*self._seen, *turn.new_messages]
        else:
            raise SessionError(f"llm turn {turn.turn} has neither messages nor new_messages")
        self._seen = [*context, turn.response]
        return context

    def stored(self, context: list[Message], response: Message) -> dict[str, list[Message]]:
        """The `LLMTurn` fields that store `context`: what is new since the last turn, or the whole context when it
        does not extend the last one."""
        known = len(self._seen)
        fields = {"new_messages": context[known:]} if context[:known] == self._seen else {"messages": context}
        self._seen = [*context, response]
        return fields
