"""Where evaluations run: here, one at a time per GPU (`LocalExecutor`), or as Ray tasks (`ray_executor`).

An executor judges one task's candidate at a time per worker (`judge`, called from one runner thread per
worker) and is closed when the bench ends.
"""

from __future__ import annotations

import os
import queue
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import torch

from kernelpilot.bench.judging import judge_task
from kernelpilot.bench.outcome import TaskOutcome
from kernelpilot.bench.suite import SuiteTask
from kernelpilot.errors import UsageError
from kernelpilot.harness import EvalOptions, PreparedJudge, prepare_judge
from kernelpilot.harness.worker_process import StartedWorker, discard_worker, start_worker


class Executor(Protocol):
    workers: int

    def judge(self, task: SuiteTask, candidate: Path, spent_s: float) -> TaskOutcome: ...

    def close(self) -> None: ...


def visible_gpus() -> list[str]:
    """The GPUs this process may use, by the ids `CUDA_VISIBLE_DEVICES` gives them (or their indices)."""
    if not torch.cuda.is_available():
        return []
    listed = [d.strip() for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return listed[:torch.cuda.device_count()] if listed else [str(i) for i in range(torch.cuda.device_count())]


def default_workers(device: str) -> int:
    """One per GPU on cuda; one on the CPU, where evaluations running side by side would time each other's load."""
    return max(1, len(visible_gpus())) if device == "cuda" else 1


IMPORT_PHASE = "[import]"
"""`evaluate`'s log line as its worker goes on to the candidate: the baselines are timed, and nothing is timed
again until the candidate's profile."""


SPARES_AHEAD = 2
"""Workers started ahead per slot: the one for the task after next starts during this task's candidate, so that
its start-up (5-7 s on an H100) is over long before its task begins; one ahead left 4 s of it unhidden."""


@dataclass
class Slot:
    """One worker of the local executor: its GPU (by `options.env`) and the next judges' workers, started ahead."""

    options: EvalOptions
    spares: deque[StartedWorker] = field(default_factory=deque)

    def prepare(self, task: Path, options: EvalOptions) -> PreparedJudge:
        """The task's judge, on the worker started earliest if there is one."""
        return prepare_judge(task, options, worker=self.spares.popleft() if self.spares else None)

    def on_log(self, line: str) -> None:
        """Once the baselines are timed, workers for the next tasks start: their interpreter, torch and CUDA
        context come up while this candidate is imported and verified, not while eager or torch.compile is
        timed (a start-up then would slow the baseline and flatter the candidate)."""
        if line == IMPORT_PHASE:
            self.start_spares()

    def start_spares(self) -> None:
        """On the CPU there are none: a start-up's load would land in an evaluation's timing, all of which runs
        on the same cores."""
        while len(self.spares) < SPARES_AHEAD and self.options.device == "cuda":
            self.spares.append(start_worker(self.options))

    def close(self) -> None:
        while self.spares:
            discard_worker(self.spares.popleft())


class LocalExecutor:
    """Evaluations in this machine's own processes: `workers` at a time, each pinned to a GPU of its own
    (`CUDA_VISIBLE_DEVICES` for its judge's worker), so no evaluation ever shares a GPU's timing."""

    def __init__(self, options: EvalOptions, workers: int) -> None:
        if options.device == "cuda":
            gpus = visible_gpus()
            if workers > len(gpus):
                raise UsageError(f"--workers {workers}, but {len(gpus)} GPU(s) are visible: one evaluation per GPU "
                                 "at a time keeps timings apart")
            slots = [Slot(replace(options, env={**options.env, "CUDA_VISIBLE_DEVICES": gpu})) for gpu in gpus[:workers]]
        else:
            slots = [Slot(options) for _ in range(workers)]
        self.workers = workers
        self._slots: queue.SimpleQueue[Slot] = queue.SimpleQueue()
        self._all = slots
        for slot in slots:
            self._slots.put(slot)

    def judge(self, task: SuiteTask, candidate: Path, spent_s: float = 0.0) -> TaskOutcome:
        slot = self._slots.get()
        try:
            return judge_task(task, candidate, slot.options, slot.prepare, spent_s, slot.on_log)
        finally:
            slot.start_spares()  # an evaluation that ended before its candidate's import started none
            self._slots.put(slot)

    def close(self) -> None:
        for slot in self._all:
            slot.close()
