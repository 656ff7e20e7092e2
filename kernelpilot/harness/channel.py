"""Messages from the worker (which runs the candidate) to the parent (which judges it).

Each message is a dict of plain values and tensors, saved with `torch.save` into the run's scratch
folder; its file name travels as one line on a pipe. The parent reads messages with
`torch.load(weights_only=True)`, so nothing the candidate's process writes can execute code in the
judge, and it ignores message kinds that are not allowed in the current phase. It deletes each file
once read: the reference's answers, sent before the candidate is imported, are gone from the disk
before the worker is allowed to import it.
"""

from __future__ import annotations

import itertools
import os
import select
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch


class WorkerChannel:
    """The worker's end: `send(kind, **fields)`."""

    def __init__(self, fd: int, scratch: Path) -> None:
        self._fd = fd
        self._scratch = scratch
        self._counter = itertools.count()

    def send(self, kind: str, **fields: Any) -> None:
        name = f"msg-{next(self._counter):04d}.pt"
        tmp = self._scratch / f".{name}"
        torch.save({"kind": kind, **fields}, tmp)
        os.replace(tmp, self._scratch / name)
        os.write(self._fd, f"{name}\n".encode())


@dataclass
class Message:
    kind: str
    fields: dict[str, Any]
    received_at: float


class ParentChannel:
    """The parent's end: yields messages until the pipe closes or a deadline passes."""

    def __init__(self, fd: int, scratch: Path) -> None:
        self._fd = fd
        self._scratch = scratch
        self._buffer = b""

    def receive(self, deadline: float) -> Message | None:
        """The next message; None when the worker closed the pipe. Raises TimeoutError at the deadline."""
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._fd], [], [], min(remaining, 0.5))
            if not ready:
                continue
            chunk = os.read(self._fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        name = line.decode(errors="replace").strip()
        if "/" in name or not name.startswith("msg-"):
            return Message("garbled", {"line": name[:200]}, time.monotonic())
        path = self._scratch / name
        try:
            data = torch.load(path, weights_only=True, map_location="cpu")
        except Exception as error:  # an unreadable message is the worker's fault, never a crash here
            return Message("garbled", {"line": f"{name}: {error}"[:300]}, time.monotonic())
        finally:
            path.unlink(missing_ok=True)  # the reference's answers must not wait on disk for the candidate
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            return Message("garbled", {"line": name}, time.monotonic())
        kind = data.pop("kind")
        return Message(kind, data, time.monotonic())
