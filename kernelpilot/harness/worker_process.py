"""The judge's handle on a worker: a sandboxed process started before its candidate is known.

Its interpreter, torch and the device's context come up before its job arrives on stdin; it runs nothing
of anyone's before that. `prepared.prepare_judge` starts one and gives it a task's job ahead of the
candidate.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.harness import processes
from kernelpilot.harness.keeper_process import KeeperProcess, finish, start_keeper
from kernelpilot.harness.output_tail import OutputTail
from kernelpilot.harness.paths import cache_root
from kernelpilot.harness.process_gate import GATE_FD_ENV, ProcessGate
from kernelpilot.harness.protocol import EvalOptions
from kernelpilot.harness.sandbox import isolation_kind, sandboxed, scrubbed_env

WORKER_ENTRY = ("from kernelpilot.harness.process_gate import hand_process_starts_to_judge; "
                "hand_process_starts_to_judge(); from kernelpilot.harness.worker import main; main()")
"""Not `-m`: as `__main__` the worker's live functions would not be the module the guards watch. The process
gate first, while the interpreter has one thread."""
SCRATCH_SHM_MIN_FREE = 4 << 30
SCRATCH_PREFIX = "kernelpilot-eval-"
COMPILERS = frozenset({"cc1plus", "cc1", "gcc", "g++", "c++", "ld", "collect2", "ninja", "nvcc", "cicc", "ptxas",
                       "fatbinary", "nvlink", "cudafe++"})


def scratch_parent() -> str | None:
    """Shared memory when there is room (CPU outputs pass through here), unless the sandbox mounts a /dev/shm
    of its own over it (`unshare`: bwrap binds the scratch folder from outside)."""
    if isolation_kind().startswith("unshare"):
        return None
    try:
        usage = shutil.disk_usage("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if usage.free > SCRATCH_SHM_MIN_FREE and os.access("/dev/shm", os.W_OK) else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def remove_orphaned_scratch() -> None:
    """Scratch folders left by evaluations whose process was killed (kill -9 skips every cleanup).

    They hold reference answers and outputs, in /dev/shm where there is room: memory, not disk. Both places
    are swept: the orphans themselves may have left /dev/shm too full for this evaluation.
    """
    parents = {Path("/dev/shm"), Path(tempfile.gettempdir())}
    for folder in (f for parent in parents if parent.is_dir() for f in parent.glob(f"{SCRATCH_PREFIX}*-*")):
        pid = folder.name.removeprefix(SCRATCH_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def worker_env(scratch: Path, device: str, extra: dict[str, str]) -> dict[str, str]:
    """The worker's caches are its own: a torch extensions folder shared between evaluations let one
    candidate leave a stale lock or a swapped binary under another's extension name."""
    return scrubbed_env({
        "KERNELPILOT_CACHE_DIR": str(scratch / "cache"),
        "KERNELPILOT_SHARED_CACHE": str(cache_root()),
        **extra,
        "KERNELPILOT_WORKER_DEVICE": device,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "OMP_WAIT_POLICY": "PASSIVE",
        "THP_MEM_ALLOC_ENABLE": "1",  # torch's large host tensors in huge pages: a fresh 256 MB tensor otherwise
        # costs 65536 page faults, about as much as the copy into it, in every call of the task
        "TORCH_EXTENSIONS_DIR": str(scratch / "torch_extensions"),
        "TORCHINDUCTOR_CACHE_DIR": str(scratch / "inductor"),
        "TORCHINDUCTOR_COMPILE_THREADS": "1",  # no compile-worker pool: its timer thread and processes
        # would outlive the baseline into the candidate's phase (an extra thread, CPU load while timing)
        "TRITON_CACHE_DIR": str(scratch / "triton"),
        "TMPDIR": str(scratch / "tmp"),
        "PYTHONPATH": os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[2]),
                                                    os.environ.get("PYTHONPATH", "")] if p),
    })


@dataclass
class StartedWorker:
    """A worker process waiting for its job, with its private scratch folder and its end of the channel."""

    process: subprocess.Popen
    output: OutputTail
    channel_fd: int
    """The channel's write end, by the number the worker knows it."""
    channel_read_fd: int
    scratch: Path
    device: str
    env: dict[str, str]
    keeper: KeeperProcess
    """The judge's reference keeper, started beside the worker."""
    gate: ProcessGate
    """The worker's process starts, put to the judge."""

    def suits(self, options: EvalOptions) -> bool:
        """Started for the device and environment `options` ask for, and still alive (its keeper too)."""
        return self.device == options.device and self.env == options.env and self.process.poll() is None \
            and self.keeper.process.poll() is None

    def send(self, data: dict) -> None:
        """One line of JSON on the worker's stdin."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(json.dumps(data).encode() + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:  # the worker is gone; its exit is judged with the rest
            pass


def start_worker(options: EvalOptions) -> StartedWorker:
    """A fresh sandboxed worker for `options`' device and environment, in a fresh scratch folder, coming up
    in the background."""
    device, env = options.device, options.env
    parent = scratch_parent()
    remove_orphaned_scratch()
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=parent))
    (scratch / "tmp").mkdir()
    read_fd, write_fd = os.pipe()
    judge_end, worker_end = socket.socketpair()
    # CUDA's driver needs a writable /proc to start; the parent's wall clock bounds every time there
    cmd = sandboxed([sys.executable, "-c", WORKER_ENTRY], writable=[scratch], proc_read_only=device != "cuda")
    keeper = start_keeper(worker_env(scratch, device, env), device)
    process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               pass_fds=(write_fd, worker_end.fileno()), start_new_session=True,
                               env={**worker_env(scratch, device, env), GATE_FD_ENV: str(worker_end.fileno())})
    os.close(write_fd)
    worker_end.close()
    output = OutputTail(process.stdout)
    output.start()
    return StartedWorker(process, output, write_fd, read_fd, scratch, device, dict(env), keeper, ProcessGate(judge_end))


def stop_worker(worker: StartedWorker) -> None:
    """The worker and its keeper ended (the worker at once if it still runs) and its channel closed; its
    scratch folder stays, for the verdict to read."""
    worker.keeper.stop()
    finish(worker.process, lambda: _kill_group(worker.process))
    worker.gate.end()
    try:
        os.close(worker.channel_read_fd)
    except OSError:
        pass
    worker.output.join(timeout=2)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def discard_worker(worker: StartedWorker) -> None:
    """The worker and its keeper killed at once, and its scratch folder gone: nothing of theirs is wanted,
    and one still starting would otherwise be waited for until it reads its stdin (a one-shot `eval` given a
    missing task would wait out the worker's torch import)."""
    _kill_group(worker.process)
    worker.keeper.process.kill()
    stop_worker(worker)
    shutil.rmtree(worker.scratch, ignore_errors=True)


def worker_pid(root: int) -> int | None:
    """The worker's Python process below the sandbox's own (bwrap, unshare, a shell): whose CPU time counts."""
    pythons = [pid for pid, name in processes.descendants(root).items() if name.startswith("python")]
    return min(pythons) if pythons else None


def compiling(root: int) -> bool:
    """Whether a compiler runs below process `root` (load_inline building at import): the import's
    time is held to --timeout, its compiler's to --build-timeout."""
    return any(name in COMPILERS for name in processes.descendants(root).values())


def death_signal(returncode: int) -> int | None:
    """The signal that ended the worker: negative from Popen, 128 + n through bwrap's init."""
    signum = -returncode if returncode < 0 else returncode - 128 if 128 < returncode < 128 + 65 else None
    return signum if signum in signal.valid_signals() else None
