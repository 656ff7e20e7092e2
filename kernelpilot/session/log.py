"""The session log: append-only JSONL, one event per line, flushed and fsynced per event.

A `kill -9` can only tear the line being written; `read_events` skips a torn last line, and
reopening a log for appending cuts that torn tail off first so later events stay on lines of their own.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from kernelpilot.errors import SessionError
from kernelpilot.session.events import SessionEvent, event_from_json


class SessionLog:
    """Appends persisted events to `path` (thread-safe: the agent thread and the UI both record).

    The file is opened per event, so decisions recorded after the agent has finished (a review
    of the candidates) still land in the log; next to the fsync that costs nothing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        _cut_torn_tail(path)
        path.touch()
        self._lock = threading.Lock()

    def append(self, event: SessionEvent) -> None:
        if not event.persist:
            return
        line = json.dumps(event.to_json(), default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as file:
            file.write(line)
            file.flush()
            os.fsync(file.fileno())


def _cut_torn_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    with open(path, "r+b") as file:
        file.truncate(data.rfind(b"\n") + 1)


def read_events(path: Path, *, whole: bool = False) -> list[SessionEvent]:
    """Every completed event of a log; a torn last line (a kill mid-write) is skipped, or with `whole` is an error
    (for readers that must not miss the last event: it may be the session's best reward)."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError as error:
        raise SessionError(f"{path}: cannot read the session log ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise SessionError(f"{path}: not a session log (not UTF-8 text: {error.reason})") from None
    events = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(event_from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            if number == len(lines) and not whole:
                break
            what = "torn last line (killed mid-write?)" if number == len(lines) else "corrupt session log line"
            raise SessionError(f"{path}:{number}: {what} ({type(error).__name__}: {error})") from None
    return events
