"""The worker's process starts, each one put to the judge (red team 37).

A process the worker starts is in none of its CPU clocks, and one the kernel reaps by itself (`SA_NOCLDWAIT`, an
ignored SIGCHLD) never reaches its reaped children's either: a helper cloned with `CLONE_VM` computed each timed
run's answer while the harness waited before its clock, and lived only inside the timed loop, where no listing of
the sandbox's processes looks. So the judge decides each start as it happens, not what is left of it later.

Before anything else runs in it, the worker installs a seccomp filter that sends every `fork`, `vfork` and `clone`
without `CLONE_THREAD` (threads are in its clocks) to a listener, refuses `clone3` (whose flags a filter cannot
read: the C library falls back to `clone`) and any new filter (a listener of the candidate's own would answer in
the judge's stead), and hands the listener to the judge over a socket. The judge lets every start through until
the candidate's model is built (`load_inline` runs compilers), and refuses, and records, any after: forward and
everything the candidate's threads do around it run with no process beside them. Children inherit the filter.

Linux only (x86-64 and arm64); where the filter cannot be installed the judge records why.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import platform
import select
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass, field

GATE_FD_ENV = "KERNELPILOT_GATE_FD"
"""The worker's end of the socket the listener travels on."""

_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_CLONE_THREAD = 0x00010000
_RET_ALLOW = 0x7FFF0000
_RET_USER_NOTIF = 0x7FC00000
_RET_ERRNO = 0x00050000
_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Abi:
    arch: int
    """`AUDIT_ARCH_*`: a syscall made through another ABI (i386's `int 0x80`) is refused outright."""
    seccomp: int
    prctl: int
    clone: int
    clone3: int
    forks: tuple[int, ...]
    """`fork` and `vfork`, where the ABI has them."""


_ABIS = {
    "x86_64": _Abi(0xC000003E, seccomp=317, prctl=157, clone=56, clone3=435, forks=(57, 58)),
    "aarch64": _Abi(0xC00000B7, seccomp=277, prctl=167, clone=220, clone3=435, forks=()),
}

# seccomp_notif: id, pid, flags, then seccomp_data (nr, arch, instruction pointer, six arguments)
_NOTIF = struct.Struct("=QII iIQ 6Q")
_NOTIF_RESP = struct.Struct("=QqiI")
_NOTIF_RECV = (3 << 30) | (_NOTIF.size << 16) | (ord("!") << 8) | 0
_NOTIF_SEND = (3 << 30) | (_NOTIF_RESP.size << 16) | (ord("!") << 8) | 1
_FLAG_CONTINUE = 1


def _filter_program(abi: _Abi) -> bytes:
    """The classic-BPF program, assembled: jumps are to labels, resolved to the relative offsets BPF takes."""
    load_nr, load_arch, load_arg0 = (0x20, 0), (0x20, 4), (0x20, 16)  # BPF_LD|BPF_W|BPF_ABS at seccomp_data offsets
    refuse, unknown = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    code: list[tuple] = [
        load_arch, ("jne", abi.arch, "refuse"),
        load_nr, ("jge", _X32_SYSCALL_BIT, "refuse"),
        ("jeq", abi.clone3, "unknown"), ("jeq", abi.seccomp, "refuse"), ("jeq", abi.prctl, "prctl"),
        ("jeq", abi.clone, "clone"), *[("jeq", nr, "notify") for nr in abi.forks],
        ("ret", _RET_ALLOW),
        "clone", load_arg0, ("jset", _CLONE_THREAD, "allow"),
        "notify", ("ret", _RET_USER_NOTIF),
        "prctl", load_arg0, ("jeq", _PR_SET_SECCOMP, "refuse"),
        "allow", ("ret", _RET_ALLOW),
        "refuse", ("ret", refuse),
        "unknown", ("ret", unknown),
    ]
    labels, at = {}, 0
    for item in code:
        if isinstance(item, str):
            labels[item] = at
        else:
            at += 1
    ops = {"jeq": 0x15, "jge": 0x35, "jset": 0x45, "jne": 0x15}
    program, at = b"", 0
    for item in code:
        if isinstance(item, str):
            continue
        if item[0] == "ret":
            program += struct.pack("=HBBI", 0x06, 0, 0, item[1])
        elif item[0] in ops:
            name, value, label = item
            skip = labels[label] - at - 1
            taken, other = (0, skip) if name == "jne" else (skip, 0)
            program += struct.pack("=HBBI", ops[name], taken, other, value)
        else:
            program += struct.pack("=HBBI", item[0], 0, 0, item[1])
        at += 1
    return program


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def hand_process_starts_to_judge() -> None:
    """Worker, first thing: the filter installed, its listener sent to the judge (or why it could not be)."""
    fd = os.environ.pop(GATE_FD_ENV, None)
    if fd is None:
        return
    with socket.socket(fileno=int(fd)) as judge:
        try:
            listener = _install_filter()
        except OSError as error:
            judge.sendall(f"no process gate: {error}".encode())
            return
        socket.send_fds(judge, [b"gate"], [listener])
        os.close(listener)


def _install_filter() -> int:
    abi = _ABIS.get(platform.machine())
    if abi is None:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {platform.machine()}")
    if len(os.listdir("/proc/self/task")) != 1:  # a filter binds the thread that installs it and its later ones
        raise OSError(errno.EBUSY, "the worker has more than one thread already")
    libc = ctypes.CDLL(None, use_errno=True)
    program = _filter_program(abi)
    fprog = _SockFprog(len(program) // 8, program)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    listener = libc.syscall(abi.seccomp, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_NEW_LISTENER,
                            ctypes.byref(fprog))
    if listener < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"seccomp: {os.strerror(error)}")
    return listener


@dataclass
class ProcessGate:
    """Judge: the worker's process starts, let through until `shut`, refused and recorded after."""

    socket: socket.socket
    refused: list[str] = field(default_factory=list)
    """Each start refused, as "pid (name): syscall"."""
    unavailable: str | None = None
    """Why the worker could not hand its starts over (no listener ever came)."""
    _shut: threading.Event = field(default_factory=threading.Event)
    _ended: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        threading.Thread(target=self._serve, name="process-gate", daemon=True).start()

    def shut(self) -> None:
        """From now on, every start is refused."""
        self._shut.set()

    def end(self) -> None:
        self._ended.set()
        self.socket.close()

    def _serve(self) -> None:
        listener = _receive_listener(self.socket)
        if isinstance(listener, str):
            self.unavailable = listener
            return
        try:
            poller = select.poll()
            poller.register(listener, select.POLLIN)
            while not self._ended.is_set():
                events = poller.poll(200)
                if any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, mask in events):
                    return
                if events:
                    self._answer(listener)
        finally:
            os.close(listener)

    def _answer(self, listener: int) -> None:
        notif = bytearray(_NOTIF.size)
        try:
            fcntl.ioctl(listener, _NOTIF_RECV, notif)
        except OSError:  # the caller died before it was read
            return
        ident, pid, _, nr, *_ = _NOTIF.unpack(notif)
        if self._shut.is_set():
            self.refused.append(f"{pid} ({_name_of(pid)}): syscall {nr}")
            response = _NOTIF_RESP.pack(ident, 0, -errno.EPERM, 0)
        else:
            response = _NOTIF_RESP.pack(ident, 0, 0, _FLAG_CONTINUE)
        with contextlib.suppress(OSError):  # the caller died meanwhile
            fcntl.ioctl(listener, _NOTIF_SEND, bytearray(response))


def _receive_listener(judge: socket.socket) -> int | str:
    """The worker's listener, or why it sent none."""
    try:
        data, fds, _, _ = socket.recv_fds(judge, 256, 1)
    except OSError as error:
        return f"no process gate: {error}"
    return fds[0] if fds else data.decode(errors="replace") or "no process gate: the worker sent no listener"


def probe() -> str | None:
    """Why a worker's process starts cannot be put to the judge on this machine (None: they can)."""
    judge_end, worker_end = socket.socketpair()
    code = "from kernelpilot.harness.process_gate import hand_process_starts_to_judge; hand_process_starts_to_judge()"
    with judge_end:
        with worker_end:
            subprocess.run([sys.executable, "-c", code], pass_fds=(worker_end.fileno(),), timeout=60,
                           env={**os.environ, GATE_FD_ENV: str(worker_end.fileno())})
        listener = _receive_listener(judge_end)
    if isinstance(listener, str):
        return listener
    os.close(listener)
    return None


def _name_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return "?"
