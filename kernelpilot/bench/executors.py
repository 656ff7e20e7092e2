"""Where evaluations run: here, one at a time per GPU (`LocalExecutor`), or as Ray tasks (`ray_executor`).

An executor judges one task's candidate at a time per worker (`judge`, called from one runner thread per
worker) and is closed when the bench ends.
"""

from __future__ import annotations

import os
import queue
from dataclasses import dataclass, replace
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


@dataclass
class Slot:
    """One worker of the local executor: its GPU (by `options.env`) and the next judge's worker, started ahead."""

    options: EvalOptions
    spare: StartedWorker | None = None

    def prepare(self, task: Path, options: EvalOptions) -> PreparedJudge:
        """The task's judge, on the worker started ahead if there is one."""
        worker, self.spare = self.spare, None
        return prepare_judge(task, options, worker=worker)

    def on_log(self, line: str) -> None:
        """Once the baselines are timed, the next task's worker starts: its interpreter, torch and CUDA context
        come up while this candidate is imported and verified, not while eager or torch.compile is timed
        (a start-up then would slow the baseline and flatter the candidate)."""
        if line == IMPORT_PHASE:
            self.start_spare()

    def start_spare(self) -> None:
        """On the CPU there is none: its start-up's load would land in an evaluation's timing, all of which
        runs on the same cores."""
        if self.spare is None and self.options.device == "cuda":
            self.spare = start_worker(self.options)

    def close(self) -> None:
        if self.spare is not None:
            discard_worker(self.spare)
            self.spare = None


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
            slot.start_spare()  # an evaluation that ended before its candidate's import started none
            self._slots.put(slot)

    def close(self) -> None:
        for slot in self._all:
            slot.close()
