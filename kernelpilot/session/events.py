"""Session events: what the agent loop emits, the session log stores and the TUI shows.

One frozen dataclass per kind. Every event serialises to one JSON line
(`{"kind": ..., "ts": ..., **fields}`) and reads back with `event_from_json`.
Transient events (`persist = False`: token deltas, build log lines) are shown live but not logged;
their content is logged anyway inside the final `LLMTurn` / `Evaluation`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kernelpilot.harness.protocol import DEFAULT_POLICY
from kernelpilot.harness.result import EvalResult


@dataclass(frozen=True)
class SessionEvent:
    kind: ClassVar[str] = "event"
    persist: ClassVar[bool] = True
    ts: float = field(default_factory=time.time, kw_only=True)

    def to_json(self) -> dict[str, Any]:
        data = {"kind": self.kind}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            data[f.name] = value.to_json() if isinstance(value, EvalResult) else value
        return data


MANUAL_MODEL = "manual"
"""SessionStarted's model when a person writes the candidates (no LLM)."""


@dataclass(frozen=True)
class SessionStarted(SessionEvent):
    """First line of every log: enough to reproduce the setting of the rollout."""

    kind: ClassVar[str] = "session_started"
    session_id: str
    task_path: str
    task_sha256: str
    skill: str
    model: str
    sampling: dict[str, Any]
    device: str
    policy: str = DEFAULT_POLICY


@dataclass(frozen=True)
class LLMTurn(SessionEvent):
    """One completed model response, with what the provider returned for RL (token ids, logprobs)."""

    kind: ClassVar[str] = "llm_turn"
    turn: int
    response: dict[str, Any]
    """The assistant message: content and tool calls."""
    new_messages: list[dict[str, Any]] | None = None
    """The request's messages that are new since the previous turn: what followed its response (tool results,
    the user's words, a nudge); on the first turn, the whole opening. Each message is stored once, so a log grows
    linearly with the session; `session.contexts.TurnContexts` rebuilds each turn's full context."""
    messages: list[dict[str, Any]] | None = None
    """The request's full context, instead of `new_messages`: in logs written before `new_messages` existed, and
    when a context does not extend the previous one (a conversation that was rewritten)."""
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""
    """The model that answered (a resumed session may switch models)."""
    sampling: dict[str, Any] = field(default_factory=dict)
    """The sampling parameters of this request (temperature, top_p, max_tokens), for off-policy corrections."""


@dataclass(frozen=True)
class TokenDelta(SessionEvent):
    """A streamed piece of the assistant's text (live view only)."""

    kind: ClassVar[str] = "token_delta"
    persist: ClassVar[bool] = False
    turn: int
    text: str


@dataclass(frozen=True)
class ToolCall(SessionEvent):
    kind: ClassVar[str] = "tool_call"
    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult(SessionEvent):
    kind: ClassVar[str] = "tool_result"
    turn: int
    call_id: str
    name: str
    output: str
    ok: bool = True
    invalid_call: bool | None = None
    """The model's call itself was wrong (unknown tool, bad arguments, a path or edit the tool refused), as opposed
    to a sound call that failed (a shell command's exit status, a denied command, an interrupted call). None in
    logs written before it was recorded: `session.trajectory` then counts every failed call but shell's and
    evaluate's."""


@dataclass(frozen=True)
class BuildLogLine(SessionEvent):
    """A line of compiler output while a candidate builds (live view only)."""

    kind: ClassVar[str] = "build_log"
    persist: ClassVar[bool] = False
    candidate_id: int
    line: str


@dataclass(frozen=True)
class Evaluation(SessionEvent):
    """A candidate evaluated by the harness; `commit` is its git commit in the workspace."""

    kind: ClassVar[str] = "evaluation"
    candidate_id: int
    commit: str
    result: EvalResult


@dataclass(frozen=True)
class PermissionAsked(SessionEvent):
    """The agent wants to run a shell command the policy says to ask about."""

    kind: ClassVar[str] = "permission_asked"
    request_id: str
    command: str


@dataclass(frozen=True)
class UserMessage(SessionEvent):
    """A steering message the user typed; it joins the conversation before the next turn."""

    kind: ClassVar[str] = "user_message"
    text: str


@dataclass(frozen=True)
class UserDecision(SessionEvent):
    """accept / reject / undo of a candidate (or some of its hunks), and permission answers."""

    kind: ClassVar[str] = "user_decision"
    decision: str
    candidate_id: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionEnded(SessionEvent):
    kind: ClassVar[str] = "session_ended"
    reason: str
    best_candidate_id: int | None = None
    turns: int = 0
    cost_usd: float = 0.0


EVENT_TYPES: dict[str, type[SessionEvent]] = {
    cls.kind: cls
    for cls in (
        SessionStarted,
        LLMTurn,
        TokenDelta,
        ToolCall,
        ToolResult,
        BuildLogLine,
        Evaluation,
        PermissionAsked,
        UserMessage,
        UserDecision,
        SessionEnded,
    )
}


def event_from_json(data: dict[str, Any]) -> SessionEvent:
    data = dict(data)
    cls = EVENT_TYPES[data.pop("kind")]
    if cls is Evaluation:
        data["result"] = EvalResult.from_json(data["result"])
    return cls(**data)
