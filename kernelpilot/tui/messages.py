"""Messages that workers post to the app; the app routes them to widgets with `@on`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message


class SessionEventsWaiting(Message):
    """Events from the session's threads wait in the app's inbox (one message for a burst of them)."""


@dataclass
class SessionFinished(Message):
    summary: Any
    error: str | None = None


@dataclass
class CandidateLoaded(Message):
    """A candidate's files, and those of the versions it is diffed against."""

    candidate_id: int
    files: dict[str, str]
    previous: dict[str, str]
    best: dict[str, str]
