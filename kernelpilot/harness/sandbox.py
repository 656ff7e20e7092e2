"""Isolation for processes that run agent-written code: read-only system, no network, no secrets.

bubblewrap where it works (as Claude Code does on Linux), else `unshare` namespaces (the GPU
images have no bwrap), else a plain subprocess — and every result says which one was in force.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
KEPT_ANYWAY = {"KERNELPILOT_SESSION_DIR"}


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment minus anything that looks like a credential (API keys never reach a candidate)."""
    env = {k: v for k, v in os.environ.items() if k in KEPT_ANYWAY or not SECRET_NAME.search(k)}
    env.update(extra or {})
    return env


@functools.cache
def _works(*cmd: str) -> bool:
    try:
        return subprocess.run([*cmd, "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


_UNSHARE_FORMS = (
    ("unshare", "-n", "-p", "-f", "--mount-proc", "--kill-child"),
    ("unshare", "-rn", "-p", "-f", "--mount-proc", "--kill-child"),
    ("unshare", "-n"),
    ("unshare", "-rn"),
)
"""Strongest first: without its own PID namespace a candidate can see and signal the judge (SIGSTOP it)."""


@functools.cache
def _unshare_prefix() -> tuple[str, ...] | None:
    if shutil.which("unshare") is None:
        return None
    return next((form for form in _UNSHARE_FORMS if _works(*form)), None)


@functools.cache
def isolation_kind() -> str:
    """`bwrap`, `unshare+pid`, `unshare` or `none`: the strongest isolation this machine supports."""
    forced = os.environ.get("KERNELPILOT_SANDBOX")  # `none`, or `unshare` to skip bwrap (tests, debugging)
    if forced == "none":
        return "none"
    if forced != "unshare" and shutil.which("bwrap") and _works("bwrap", "--ro-bind", "/", "/", "--dev", "/dev",
                                                                "--unshare-net", "--unshare-pid"):
        return "bwrap"
    if prefix := _unshare_prefix():
        return "unshare+pid" if "-p" in prefix else "unshare"
    return "none"


def sandboxed(cmd: list[str], writable: Iterable[Path], read_only: Iterable[Path] = ()) -> list[str]:
    """`cmd` wrapped so that only `writable` folders can be written and the network is gone.

    Under bwrap and `unshare+pid` no process outside the sandbox can be seen or signalled either (a
    candidate cannot stop or kill the judge); under bwrap `read_only` paths inside a writable folder
    stay read-only too.
    """
    kind = isolation_kind()
    if kind == "bwrap":
        binds = [arg for path in writable for arg in ("--bind", str(path), str(path))] + \
                [arg for path in read_only for arg in ("--ro-bind", str(path), str(path))]
        return ["bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc", *binds,
                "--unshare-net", "--unshare-ipc", "--unshare-pid", "--die-with-parent", "--new-session", "--", *cmd]
    if kind.startswith("unshare"):
        return [*_unshare_prefix(), *cmd]
    return cmd
