"""The shell tool's permission policy (allow / ask / deny), as in Claude Code and Codex CLI.

Patterns are shell globs matched against the whole command line; deny wins over allow, and
anything matching neither gets the default (`ask` in the TUI, `deny` headless).
"""

from __future__ import annotations

import fnmatch
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.harness.sandbox import sandboxed, scrubbed_env

DECISIONS = ("allow", "ask", "deny")
SHELL_TIMEOUT_S = 300.0
OUTPUT_LIMIT = 20_000


@dataclass(frozen=True)
class ShellPolicy:
    default: str = "ask"
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def decide(self, command: str) -> str:
        command = command.strip()
        if any(fnmatch.fnmatchcase(command, pattern) for pattern in self.deny):
            return "deny"
        if any(fnmatch.fnmatchcase(command, pattern) for pattern in self.allow):
            return "allow"
        return self.default

    def allowing(self, command: str) -> ShellPolicy:
        """This policy plus `command` allowed (a user's "always" answer)."""
        return ShellPolicy(self.default, (*self.allow, command.strip()), self.deny)


def run_shell(command: str, cwd: Path, protected: Iterable[Path] = (),
              timeout_s: float = SHELL_TIMEOUT_S) -> tuple[str, bool]:
    """Run an approved command in the workspace; output (tail-truncated) and whether it exited 0.

    Sandboxed like a candidate: it can write the workspace (except `protected` files) and a scratch
    TMPDIR and nothing else, has no network, and never sees an API key.
    """
    with tempfile.TemporaryDirectory(prefix="kernelpilot-shell-") as scratch:
        cmd = sandboxed(["bash", "-c", command], writable=[cwd, Path(scratch)],
                        read_only=[path for path in protected if path.exists()])
        try:
            done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                                  errors="replace", env=scrubbed_env({"TMPDIR": scratch}))
        except subprocess.TimeoutExpired:
            return f"timed out after {timeout_s:.0f} s", False
    output = (done.stdout + done.stderr)[-OUTPUT_LIMIT:]
    return f"exit status {done.returncode}\n{output}", done.returncode == 0
