"""Messages from the worker (which runs the candidate) to the parent (which judges it).

Each message (`messages.WorkerMessage`) goes as a dict of plain values and tensors, saved with
`torch.save` into the run's scratch folder; its file name and a keyed digest of its bytes and its place in the sequence travel as one
line on a pipe. The key is the parent's, given to the worker's harness code only: a message that code
in the candidate writes to the pipe itself (a forged timing, a forged "done") fails the digest and is
reported as forged. The parent reads messages with `torch.load(weights_only=True)`, so nothing the
candidate's process writes can execute code in the judge, and it ignores message kinds that are not
allowed in the current phase. It deletes each file once read: the reference's answers, sent before
the candidate is imported, are gone from the disk before the worker is allowed to import it.
"""

from __future__ import annotations

import hmac
import io
import itertools
import os
import secrets
import select
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from _hashlib import hmac_new  # OpenSSL's HMAC, bound here: no name the candidate can rebind sees the key

from kernelpilot.harness.messages import WorkerMessage, from_wire
from kernelpilot.harness.shared_output import read_regular_file


def digest(key: bytes, number: int, data: bytes | memoryview) -> str:
    """HMAC-SHA256 (OpenSSL's: twice blake2b's speed here, which matters at hundreds of MB a message) of the
    message's place in the sequence and its bytes."""
    mac = hmac_new(key, number.to_bytes(8, "little"), "sha256")
    mac.update(data)
    return mac.hexdigest()


class WorkerChannel:
    """The worker's end: `send(message)`."""

    def __init__(self, fd: int, scratch: Path, key: bytes) -> None:
        self._fd = fd
        self._scratch = scratch
        self._key = key
        self._counter = itertools.count()

    def send(self, message: WorkerMessage) -> None:
        number = next(self._counter)
        name = f"msg-{number:04d}.pt"
        buffer = io.BytesIO()
        torch.save(message.to_wire(), buffer)
        data = buffer.getbuffer()  # no copy: a reference answer can be gigabytes
        # a fresh name, created here: one the candidate planted first (and leased, to hold the harness in its
        # open while it worked: red team 33) is never opened
        tmp = self._scratch / f".{name}.{secrets.token_hex(8)}"
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as file:
            file.write(data)
        os.replace(tmp, self._scratch / name)
        os.write(self._fd, f"{name} {digest(self._key, number, data)}\n".encode())


@dataclass(frozen=True)
class Received:
    """A message as the parent got it: None with the `problem` when it is not one the harness sent."""

    message: WorkerMessage | None
    received_at: float
    """When its line reached the pipe, on `time.perf_counter`: the parent's own clock."""
    problem: str | None = None


class ParentChannel:
    """The parent's end: yields messages until the pipe closes or a deadline passes."""

    def __init__(self, fd: int, scratch: Path, key: bytes) -> None:
        self._fd = fd
        self._scratch = scratch
        self._key = key
        self._buffer = b""
        self._arrived_at = time.perf_counter()
        self._expected = itertools.count()

    def receive(self, deadline: float, max_bytes: int | None = None) -> Received | None:
        """The next message, of at most `max_bytes`; None when the worker closed the pipe. Raises TimeoutError
        at the deadline."""
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
            self._arrived_at = time.perf_counter()
        line, self._buffer = self._buffer.split(b"\n", 1)
        name, _, signature = line.decode(errors="replace").strip().partition(" ")
        if "/" in name or not name.startswith("msg-"):
            return Received(None, self._arrived_at, f"garbled message {name[:200]}")
        path = self._scratch / name
        try:
            data = read_regular_file(path, max_bytes)
        except OSError as error:
            return Received(None, self._arrived_at, f"garbled message {name}: {error}"[:300])
        finally:
            path.unlink(missing_ok=True)  # the reference's answers must not wait on disk for the candidate
        if not hmac.compare_digest(signature, digest(self._key, next(self._expected), data)):
            return Received(None, self._arrived_at, f"forged message {name[:200]}")
        try:
            message = from_wire(torch.load(io.BytesIO(data), weights_only=True, map_location="cpu"))
        except Exception as error:  # unreadable, or no message of the harness's: the worker's fault, never ours
            return Received(None, self._arrived_at, f"garbled message {name}: {error}"[:300])
        return Received(message, self._arrived_at)
