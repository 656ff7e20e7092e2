"""A judge prepared before its candidate exists: a fresh worker given the task's job, which starts torch
(and the device) and loads the task, then waits; and beside it the judge's reference keeper, which builds
the task's model and checks, on seeds of its own, that the task can judge a kernel.

A session prepares the next candidate's judge while the agent thinks, so an evaluation pays only for the
baselines and the candidate. Nothing timed runs ahead: eager and torch.compile are timed once the
candidate is there, just before it, as in a one-shot evaluation (a compiler or the agent's own tools
running meanwhile would slow the baseline and flatter the candidate).
"""

from __future__ import annotations

import math
import os
import secrets
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import torch

from kernelpilot.errors import TaskError, UsageError
from kernelpilot.harness import baselines
from kernelpilot.harness.channel import ParentChannel, Received
from kernelpilot.harness.judge import check_task
from kernelpilot.harness.keeper import Check, Checked, Load, Loaded, Prepare, TimedAnswers, TimedInputs, TimedSamples
from kernelpilot.harness.keeper_process import KeeperFailure
from kernelpilot.harness.messages import Done, Failed, Observed, TaskInfo
from kernelpilot.harness.observations import Observations
from kernelpilot.harness.protocol import (
    CLOCK_CALIBRATION_RUNS,
    DEGENERACY_PROBES,
    COMPILE_MODES,
    DEFAULT_SETUP_TIMEOUT_S,
    INPUT_SETS,
    L2_FLUSH_BYTES,
    POLICIES,
    POST_TIMING_CHECKS,
    TIMED_RUNS,
    VERIFY_TRIALS,
    WARMUP_RUNS,
    EvalOptions,
    timing_input_sets,
)
from kernelpilot.harness.task_files import check_task_file, sha256_file
from kernelpilot.harness.verify import CallCheck, Reference
from kernelpilot.harness.worker_process import StartedWorker, discard_worker, start_worker

DRAIN_POLL_S = 0.05


@dataclass
class PreparedJudge:
    """A worker at work on `task`'s references for `options`, and what the verdict needs of them."""

    task: Path
    """The task as the caller named it (resolved)."""
    private_task: Path
    """The worker's read-only copy of it."""
    task_sha256: str
    task_bytes: int
    options: EvalOptions
    worker: StartedWorker
    seeds: dict
    channel_key: bytes
    channel: ParentChannel
    device_name: str
    compile_keys: dict[str, str]
    cached_compile: dict[str, dict] = field(default_factory=dict)
    modes_to_measure: list[str] = field(default_factory=list)
    setup_messages: deque[Received | None] = field(default_factory=deque)
    """What the worker sent while it was prepared, read as it came; None where it closed its channel."""
    _stop_draining: threading.Event = field(default_factory=threading.Event)
    _drain: threading.Thread | None = None
    _loaded: Loaded | None = None

    def start_draining(self) -> None:
        """Read the setup's messages as they come: the reference's answers must not wait on disk while the
        agent thinks (its shell, or a candidate, could read them there), and the worker never waits on us."""
        self._drain = threading.Thread(target=self._read_setup, daemon=True)
        self._drain.start()

    def _read_setup(self) -> None:
        while not self._stop_draining.is_set():
            try:
                received = self.channel.receive(time.monotonic() + DRAIN_POLL_S)
            except TimeoutError:
                continue
            self.setup_messages.append(received)
            if received is None or isinstance(received.message, (TaskInfo, Failed, Done, type(None))):
                return  # the setup's last message, or none will follow

    def stop_draining(self) -> None:
        """The drain stopped: from now on the evaluation reads the channel itself."""
        self._stop_draining.set()
        if self._drain is not None:
            self._drain.join()

    def loaded(self) -> list[Reference]:
        """The keeper's references for its probe seeds, once it has built the task's model; raises `TaskError`,
        in `kernelpilot eval`'s words, for a task the judge cannot use (it does not import or run, or it is
        non-deterministic or degenerate). Waited for before any timing: the keeper is idle from then on
        until the candidate's answers come."""
        if self._loaded is None:
            try:
                self._loaded = self.worker.keeper.receive(DEFAULT_SETUP_TIMEOUT_S)
            except KeeperFailure as failure:  # the task's model took the keeper down with it
                raise TaskError(f"the judge could not make the task's references: {failure.headline}"
                                ) from None
        if self._loaded.problem:
            raise TaskError(self._loaded.problem)
        return self._loaded.references

    def timing_seeds(self) -> list[int]:
        """The seeds of the input sets the timing rotates: as many as the task's inputs leave room for (after
        `loaded`)."""
        assert self._loaded is not None
        return self.seeds["timing_seeds"][:timing_input_sets(self._loaded.input_bytes)]

    def answer_ahead(self, seed: int) -> None:
        """Let the keeper make `seed`'s reference answer now, for a call of the candidate's still to come."""
        self.worker.keeper.send(Prepare(seed))

    def compare(self, call: Observed) -> tuple[CallCheck, Reference]:
        """The keeper's verdict on one of the candidate's calls, and its reference for the call's seed."""
        checked = self.worker.keeper.request(Check(call, str(self.worker.scratch)), DEFAULT_SETUP_TIMEOUT_S)
        assert isinstance(checked, Checked)
        return checked.check, checked.reference

    def timed_answers(self, runs: list[TimedInputs]) -> dict[int, list[torch.Tensor | None]]:
        """Eager's answers, at their sampled positions, on these timed runs' inputs, by run (the keeper's)."""
        answered = self.worker.keeper.request(TimedAnswers(runs), DEFAULT_SETUP_TIMEOUT_S)
        assert isinstance(answered, TimedSamples)
        return answered.samples

    def check_task(self) -> None:
        """Raise `TaskError` for a task the judge cannot use, as `loaded` does and for what the worker met
        loading it. A session checks its task so before any model turn, at no cost: this judge goes on to
        its first candidate."""
        self.loaded()
        if self._drain is not None:
            self._drain.join(DEFAULT_SETUP_TIMEOUT_S)  # a setup that hangs is the evaluation's to judge
        observations = Observations(sources={}, timed_runs=self.options.timed_runs,
                                    clock_calibration_runs=CLOCK_CALIBRATION_RUNS)
        for received in list(self.setup_messages):
            if received is not None:
                observations.receive(received, "setup")
        check_task(self.private_task, observations)

    def suits(self, task: Path, options: EvalOptions) -> bool:
        """Prepared for this very task file and these options, and its worker still alive."""
        try:
            same_task = task.stat().st_size == self.task_bytes and sha256_file(task) == self.task_sha256
        except OSError:
            return False
        return same_task and options == self.options and self.worker.suits(options)

    def discard(self) -> None:
        self.stop_draining()
        discard_worker(self.worker)


def check_options(options: EvalOptions) -> None:
    if options.device not in ("cuda", "cpu"):
        raise UsageError(f"unknown device '{options.device}' (use cuda or cpu)")
    if options.device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda, but torch sees no CUDA device (use --device cpu, or `kernelpilot doctor`)")
    if options.policy not in POLICIES:
        raise UsageError(f"unknown policy '{options.policy}' (use {' or '.join(POLICIES)})")
    # fewer would make the verdict cheaper to fool
    counts = {"--trials": (options.trials, VERIFY_TRIALS), "--timed-runs": (options.timed_runs, TIMED_RUNS)}
    if too_few := [f"{flag} must be at least {least}, not {given}" for flag, (given, least) in counts.items()
                   if given < least]:
        raise UsageError("; ".join(too_few))
    timeouts = {"--timeout": options.timeout_s, "--build-timeout": options.build_timeout_s}
    if unusable := [f"{flag} must be a positive, finite number of seconds, not {seconds}"
                    for flag, seconds in timeouts.items() if not 0 < seconds < math.inf]:  # NaN fails too
        raise UsageError("; ".join(unusable))
    if options.tol is not None and not 0 <= options.tol < math.inf:  # an infinite tolerance passes anything
        raise UsageError("--tol must be a finite, non-negative number")
    if unknown := sorted(set(options.compile_modes) - set(COMPILE_MODES)):
        raise UsageError(f"unknown compile mode {', '.join(unknown)} (use {', '.join(COMPILE_MODES)})")


def device_identity(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        model = "cpu"
    return f"{model} x{os.cpu_count()}"


def fresh_seeds(options: EvalOptions) -> dict:
    return {
        "init_seed": secrets.randbelow(2**31),
        "verify_seeds": [secrets.randbelow(2**31) for _ in range(options.trials)],
        "timing_seeds": [secrets.randbelow(2**31) for _ in range(INPUT_SETS)],
        "post_seeds": [secrets.randbelow(2**31) for _ in range(POST_TIMING_CHECKS)],
        "factor_seed": secrets.randbelow(2**31),
        "check_seeds": [secrets.randbelow(2**31) for _ in range(options.timed_runs)],
        "probe_seeds": [secrets.randbelow(2**31) for _ in range(DEGENERACY_PROBES)],
    }


def prepare_judge(task: str | Path, options: EvalOptions, worker: StartedWorker | None = None) -> PreparedJudge:
    """A worker started on `task` for `options`. Raises `UsageError` / `TaskError` for unusable input.

    `worker`, from `start_worker(options)` while something else ran (a bench's previous task), saves the wait
    for its interpreter, torch and device context; it is this judge's from here (discarded with it, or at
    once when it no longer suits `options`). It has run nothing of anyone's: nothing is made or timed ahead.
    """
    try:
        check_options(options)
        task_path = Path(task).resolve()
        check_task_file(task_path)
    except BaseException:
        if worker is not None:
            discard_worker(worker)
        raise
    if worker is not None and not worker.suits(options):
        discard_worker(worker)
        worker = None
    task_sha256, device_name = sha256_file(task_path), device_identity(options.device)
    keys = {mode: baselines.cache_key(task_sha256, device_name, torch.__version__, mode, options.timed_runs)
            for mode in options.compile_modes}
    cached = {mode: entry for mode, key in keys.items() if options.use_cache and (entry := baselines.load(key))}
    worker = worker or start_worker(options)
    try:
        private_task = worker.scratch / "task" / task_path.name
        private_task.parent.mkdir()
        shutil.copyfile(task_path, private_task)
        private_task.chmod(0o444)
        key = secrets.token_bytes(32)
        channel = ParentChannel(worker.channel_read_fd, worker.scratch, key)
        prepared = PreparedJudge(task_path, private_task, task_sha256, task_path.stat().st_size, options, worker,
                                 fresh_seeds(options), key, channel, device_name, keys, cached,
                                 [mode for mode in options.compile_modes if mode not in cached])
        worker.send(_job(prepared))
        worker.keeper.send(Load(str(private_task), prepared.seeds["init_seed"], prepared.seeds["probe_seeds"],
                                options.tol))
        prepared.start_draining()
    except BaseException:
        discard_worker(worker)
        raise
    return prepared


def _job(prepared: PreparedJudge) -> dict:
    """All the worker learns before the candidate: the task, the seeds of its references, the protocol."""
    options, seeds = prepared.options, prepared.seeds
    return {
        "task_path": str(prepared.private_task),
        "device": options.device,
        "init_seed": seeds["init_seed"],
        "timing_seeds": seeds["timing_seeds"],
        "factor_seed": seeds["factor_seed"],
        "warmup": WARMUP_RUNS,
        "timed_runs": options.timed_runs,
        "clock_calibration_runs": CLOCK_CALIBRATION_RUNS,
        "l2_flush_bytes": L2_FLUSH_BYTES[options.device],
        "compile_modes_to_measure": prepared.modes_to_measure,
        "profile_kernels": options.profile_kernels,
        "channel_fd": prepared.worker.channel_fd,
        "channel_key": prepared.channel_key.hex(),
        "scratch": str(prepared.worker.scratch),
    }
