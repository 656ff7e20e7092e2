"""The judge's handle on its reference keeper (`keeper`): a trusted process, started beside each worker.

It is not sandboxed: it runs the task's code, which is the user's, and never a candidate's. The worker's
sandbox hides it (another PID namespace), and it shares nothing the worker could open.
"""

from __future__ import annotations

import os
import pickle
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from kernelpilot.harness.keeper_frames import FRAME_HEADER, KEEPER_ENTRY, KeeperError, frame
from kernelpilot.harness.output_tail import OutputTail


class KeeperFailure(RuntimeError):
    """The keeper died, hung or failed: the harness's fault, never the candidate's."""

    @property
    def headline(self) -> str:
        """What happened, in one line: the message less the keeper's own output or traceback after it."""
        return str(self).splitlines()[0]


@dataclass
class KeeperProcess:
    process: subprocess.Popen
    stderr: OutputTail
    _buffer: bytes = b""

    def send(self, request: object) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(frame(request))
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise KeeperFailure(self._gone("stopped")) from None

    def receive(self, timeout_s: float) -> object:
        """The next reply. Raises KeeperFailure when the keeper dies, fails, or `timeout_s` passes."""
        deadline = time.monotonic() + timeout_s
        fd = self.process.stdout.fileno()
        while True:
            if len(self._buffer) >= FRAME_HEADER.size:
                size = FRAME_HEADER.size + FRAME_HEADER.unpack_from(self._buffer)[0]
                if len(self._buffer) >= size:
                    data, self._buffer = self._buffer[FRAME_HEADER.size:size], self._buffer[size:]
                    reply = pickle.loads(data)
                    if isinstance(reply, KeeperError):
                        raise KeeperFailure(f"the judge's reference keeper failed: {reply.message}")
                    return reply
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KeeperFailure(f"the judge's reference keeper gave no answer in {timeout_s:.0f} s")
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise KeeperFailure(self._gone("exited"))
                self._buffer += chunk

    def request(self, request: object, timeout_s: float) -> object:
        self.send(request)
        return self.receive(timeout_s)

    def _gone(self, how: str) -> str:
        try:
            self.process.wait(timeout=2)  # its pipe closed as it exited: its status is a moment away
        except subprocess.TimeoutExpired:
            pass
        tail = self.stderr.text().strip()[-1500:]
        return f"the judge's reference keeper {how} (status {self.process.returncode})" + (f":\n{tail}" if tail else "")

    def stop(self) -> None:
        finish(self.process, self.process.kill)
        self.process.stdout.close()
        self.stderr.join(timeout=2)


def finish(process: subprocess.Popen, kill: Callable[[], None]) -> None:
    """Close `process`'s stdin, its word to finish, and wait for it; `kill` it if it has not within 5 s."""
    if process.stdin is not None and not process.stdin.closed:
        try:
            process.stdin.close()
        except BrokenPipeError:
            pass
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        kill()
        process.wait()


def start_keeper(env: dict[str, str], device: str) -> KeeperProcess:
    """A keeper coming up in the background (interpreter, torch, the device's context) in `env` (the worker's,
    less the sandbox): it runs nothing before its first request."""
    process = subprocess.Popen([sys.executable, "-c", KEEPER_ENTRY], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**env, "KERNELPILOT_KEEPER_DEVICE": device},
                               start_new_session=True)
    stderr = OutputTail(process.stderr)
    stderr.start()
    return KeeperProcess(process, stderr)
