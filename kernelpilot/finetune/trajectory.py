"""What finetune trains on: one session as the turns the model produced and what they earned.

Plain data, built by `kernelpilot.session.trajectory.read_trajectory` from a session log, so that the
trainer needs neither the log format nor git.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ModelTurn:
    """One model response and the context it answered."""

    turn: int
    context: list[dict[str, Any]]
    """The request's messages exactly as sent (system prompt first)."""
    response: dict[str, Any]
    """The assistant message: content and tool calls."""
    token_ids: list[int] | None
    """The sampled tokens, when the provider returned them."""
    logprobs: list[float] | None
    """The behaviour policy's logprob of each sampled token, under `sampling`."""
    sampling: dict[str, Any]
    model: str
    rewards: tuple[int, ...]
    """Rewards of the evaluations this turn's tool calls ran, in order."""


@dataclass(frozen=True)
class Trajectory:
    session_id: str
    log_path: Path
    model: str
    turns: tuple[ModelTurn, ...]
    reward: int | None
    """The session's result: the best evaluation's reward (−1, 1, 2, 3); None if nothing was evaluated."""
    tool_errors: int
    """Tool calls that failed as calls (unknown tool, bad arguments), not evaluations that failed."""

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The whole conversation up to the last response, for tokenising it in one piece."""
        if not self.turns:
            return []
        last = self.turns[-1]
        return [*last.context, last.response]
