"""Processes as the kernel sees them, read from /proc (hack 10 by proxy): CPU time, the process tree,
caught signals, children. Torch-free: the judge reads them about the worker, the worker about itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import resource
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CpuTime:
    """CPU time a process has used, in ms, as the kernel counts it (no code in the process can change it)."""

    all_threads: float
    """Every thread's, exited ones too, to the nanosecond (the process's CPU clock)."""
    main_thread: float
    """The main thread's, to the nanosecond: a call it makes lasts at least as long as its share of the work."""
    reaped_children: float
    """Every child it has waited for, to the clock tick: a process run and reaped inside forward adds to it."""


def cpu_time(pid: int) -> CpuTime | None:
    """Process `pid`'s CPU time, read from /proc and its CPU clock by another process; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        children = (int(fields[13]) + int(fields[14])) * 1000.0 / os.sysconf("SC_CLK_TCK")
        process = time.clock_gettime(process_cpu_clock(pid)) * 1e3
        main = int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0]) / 1e6
        return CpuTime(process, main, children)
    except (OSError, ValueError, IndexError):
        return None


def process_cpu_clock(pid: int) -> int:
    """The clock id of process `pid`'s CPU time, all its threads' and its exited threads' (Linux's
    `MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)`: glibc's `clock_getcpuclockid`, which Python lacks)."""
    return (~pid << 3) | 2


STOPPED_STATES = frozenset("TtZX")
"""A thread stopped, or gone: it runs no more code until the process is continued."""


@contextlib.contextmanager
def stopped(pid: int, timeout_s: float = 5.0) -> Iterator[None]:
    """Process `pid` with every thread of it stopped (SIGSTOP, which no code can catch or block), continued
    after: what the judge reads of it meanwhile, no thread of it can change."""
    os.kill(pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + timeout_s
        while not _all_stopped(pid):
            if time.monotonic() > deadline:
                raise TimeoutError(f"process {pid} did not stop within {timeout_s:.0f} s")
            time.sleep(20e-6)
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def _all_stopped(pid: int) -> bool:
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError, IndexError):  # a thread gone meanwhile
            if Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in STOPPED_STATES:
                return False
    return True


def process_table() -> dict[int, tuple[str, int]]:
    """Every process this one can see: pid → (name, parent pid)."""
    table = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as file:
                text = file.read()
        except OSError:  # gone meanwhile
            continue
        name, fields = text[text.find("(") + 1:text.rfind(")")], text.rsplit(")", 1)[1].split()
        table[int(stat.split("/")[2])] = (name, int(fields[1]))
    return table


def descendants(root: int, table: dict[int, tuple[str, int]] | None = None) -> dict[int, str]:
    """`root` and every process below it: pid → name."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (_, parent) in table.items():
        children.setdefault(parent, []).append(pid)
    found, below = {}, [root]
    while below:
        pid = below.pop()
        if pid in table:
            found[pid] = table[pid][0]
        below += children.get(pid, [])
    return found


def beside(worker: int, root: int) -> dict[int, str]:
    """Every process below `root` but `worker` and the processes from `root` down that started it (bwrap, its
    init, a shell): pid → name. What a candidate starts lands there wherever it hangs it (red team 35: a helper
    cloned with CLONE_PARENT became the worker's sibling, below bwrap's init)."""
    table = process_table()
    chain, pid = set(), worker
    while pid in table and pid not in chain:
        chain.add(pid)
        if pid == root:
            break
        pid = table[pid][1]
    return {pid: name for pid, name in descendants(root, table).items() if pid not in chain}


def caught_signals(pids: Iterable[int]) -> int:
    """The signals these processes have handlers for, as one mask (bit n − 1 for signal n), from /proc."""
    mask = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("SigCgt:"):
                    mask |= int(line.split()[1], 16)
    return mask


def child_processes() -> list[str]:
    """This process's living children as "pid (name)": after the candidate's import the harness starts none."""
    me = os.getpid()
    return sorted(f"{pid} ({name})" for pid, (name, parent) in process_table().items() if parent == me)


def adopt_orphans() -> None:
    """Make this process the subreaper of everything it starts: a grandchild whose parent exits (a
    double fork) is re-parented here, where `child_processes` sees it, rather than to init."""
    pr_set_child_subreaper = 36
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)


def reaped_children_cpu_ms() -> float:
    """CPU time of every child this process has waited for: a process run and reaped inside forward adds to it."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1e3
