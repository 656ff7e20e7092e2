"""Isolation for processes that run agent-written code: read-only system, no network, no secrets.

bubblewrap where it works (as Claude Code does on Linux), else `unshare` namespaces with read-only
remounts (the GPU images have no bwrap), else a plain subprocess — and every result says which one
was in force.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
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


BWRAP_CONFINEMENT = ("--unshare-net", "--unshare-ipc", "--unshare-pid", "--as-pid-1", "--die-with-parent",
                     "--new-session", "--cap-drop", "ALL")
"""Run as root, bwrap would leave the command its capabilities (CAP_SYS_ADMIN remounts / writable). The command is
the PID namespace's init, as under `unshare`: no process of the candidate's can stop it (SIGSTOP reaches an init
only from outside its namespace) or be started beside it (`CLONE_PARENT` fails for an init; red teams 35 and 36
hid helpers there, in none of the worker's CPU clocks)."""


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


def _confinement(writable: Iterable[Path], read_only: Iterable[Path], proc_read_only: bool = True) -> str:
    """A shell script for a fresh mount namespace that makes what bwrap's binds make: every mount
    read-only (/proc too) but /dev and /sys, a fresh /dev/shm, `writable` bound back writable and `read_only` inside it
    read-only again. Then it drops every capability before running the command, so that the
    candidate (root in the namespace, or root outright on a GPU machine) cannot remount."""
    def binds(paths: Iterable[Path], mode: str) -> list[str]:
        quoted = [shlex.quote(str(path)) for path in paths]
        return [line for path in quoted for line in (f"mount --bind {path} {path}",
                                                     f"mount -o remount,bind,{mode} {path}")]

    return "\n".join([
        "set -e",
        "mount --make-rprivate /",
        *(["mount -o remount,bind,ro /proc"] if proc_read_only else []),  # no write to /proc/PID/mem
        "awk '{print $5}' /proc/self/mountinfo | while read -r m; do",
        '  m=$(printf %b "$m")',
        '  case "$m" in /proc|/proc/*|/dev|/dev/*|/sys|/sys/*) continue;; esac',
        '  mount -o remount,bind,ro "$m"',
        "done",
        # a /dev/shm of its own, as bwrap's --tmpfs: torch's shared memory works, other evaluations' is out of sight
        "if [ -d /dev/shm ]; then mount -t tmpfs -o nosuid,nodev,mode=1777 tmpfs /dev/shm; fi",
        *binds(writable, "rw"),
        *binds(read_only, "ro"),
        'cd "$PWD" || true',  # the working directory again, through the mounts just made (a writable one, say)
        'exec setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- "$@"',
    ])


@functools.cache
def unshare_form() -> tuple[tuple[str, ...], bool] | None:
    """The strongest `unshare` that works here, and whether it also makes the file system read-only."""
    if shutil.which("unshare") is None:
        return None
    for namespaces in _UNSHARE_FORMS:
        if _works(*namespaces, "-m", "sh", "-c", _confinement([], []), "sh"):
            return (*namespaces, "-m"), True
        if _works(*namespaces):
            return namespaces, False
    return None


@functools.cache
def isolation_kind() -> str:
    """`bwrap`, `unshare+pid+ro`, `unshare+pid`, `unshare+ro`, `unshare` or `none`: the strongest
    isolation this machine supports (`pid`: the judge is out of reach; `ro`: the files are read-only)."""
    forced = os.environ.get("KERNELPILOT_SANDBOX")  # `none`, or `unshare` to skip bwrap (tests, debugging)
    if forced == "none":
        return "none"
    if forced != "unshare" and shutil.which("bwrap") and _works("bwrap", "--ro-bind", "/", "/", "--dev", "/dev",
                                                                *BWRAP_CONFINEMENT, "--"):
        return "bwrap"
    if form := unshare_form():
        namespaces, read_only = form
        return "unshare" + "+pid" * ("-p" in namespaces) + "+ro" * read_only
    return "none"


def sandboxed(cmd: list[str], writable: Iterable[Path], read_only: Iterable[Path] = (),
              proc_read_only: bool = True) -> list[str]:
    """`cmd` wrapped so that only `writable` folders can be written and the network is gone.

    Under bwrap and `unshare+pid…` no process outside the sandbox can be seen or signalled either (a
    candidate cannot stop or kill the judge); `read_only` paths inside a writable folder stay
    read-only too, except under a plain `unshare` or `unshare+pid`, where the files are not read-only.
    `/proc` is read-only too (no code rewritten through /proc/PID/mem behind the harness's back) unless
    `proc_read_only` is False: the NVIDIA driver cannot start under a read-only /proc.
    """
    kind = isolation_kind()
    if kind == "bwrap":
        binds = [arg for path in writable for arg in ("--bind", str(path), str(path))] + \
                [arg for path in read_only for arg in ("--ro-bind", str(path), str(path))]
        return [*OOM_FIRST, "bwrap", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--tmpfs", "/dev/shm",
                "--proc", "/proc", *(["--remount-ro", "/proc"] if proc_read_only else []), *binds, *BWRAP_CONFINEMENT, "--", *cmd]
    if kind.startswith("unshare"):
        namespaces, read_only_system = unshare_form()
        if read_only_system:
            script = _confinement(writable, read_only, proc_read_only)
            return [*OOM_FIRST, *namespaces, "sh", "-c", script, "sh", *cmd]
        return [*OOM_FIRST, *namespaces, *cmd]
    return [*OOM_FIRST, *cmd]


OOM_FIRST = ("sh", "-c", 'echo 1000 > /proc/self/oom_score_adj; exec "$@"', "sh")
"""Set before the sandbox starts (its /proc is read-only) and inherited by everything in it: the kernel's
out-of-memory killer takes a candidate that exhausts memory before the judge or the user's TUI."""
