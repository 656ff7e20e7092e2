"""The bench loop: every task not yet in the journal, its candidate from the provider, judged by the
executor, one runner thread per executor worker; each outcome journaled (flushed) before anyone sees it.

`stop` ends the run between tasks: no new task starts, those in flight finish. Runner threads are daemons, so
a caller that stops waiting for them (a second Ctrl-C) leaves a journal that holds only finished tasks.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from kernelpilot.bench.executors import Executor
from kernelpilot.bench.journal import Journal
from kernelpilot.bench.outcome import MISSING, TASK_ERROR, TaskOutcome
from kernelpilot.bench.solutions import CandidateProvider
from kernelpilot.bench.suite import SuiteTask
from kernelpilot.errors import TaskError
from kernelpilot.harness.task_files import check_task_file

OnOutcome = Callable[[TaskOutcome], None]
OnStart = Callable[[SuiteTask], None]
JOIN_POLL_S = 0.2


class BenchRun:
    """One run over `tasks`; `start()` then `wait()` (which a KeyboardInterrupt may cut short). `on_start` and
    `on_outcome`, set before `start()`, are called from the runner threads."""

    def __init__(self, tasks: list[SuiteTask], provide: CandidateProvider, executor: Executor,
                 journal: Journal | None) -> None:
        done = journal.done if journal else {}
        self.earlier = [done[t.name] for t in tasks if t.name in done]
        self.outcomes: list[TaskOutcome] = []
        self.stop = threading.Event()
        self._pending: queue.SimpleQueue[SuiteTask] = queue.SimpleQueue()
        for task in tasks:
            if task.name not in done:
                self._pending.put(task)
        self._provide, self._executor, self._journal = provide, executor, journal
        self.on_start: OnStart = lambda task: None
        self.on_outcome: OnOutcome = lambda outcome: None
        self._lock = threading.Lock()
        self._errors: list[BaseException] = []
        self._judging: set[str] = set()
        self._running = 0
        self._ended = threading.Event()
        self._threads = [threading.Thread(target=self._work, name=f"bench-{i}", daemon=True)
                         for i in range(executor.workers)]

    def start(self) -> None:
        self._running = len(self._threads)
        for thread in self._threads:
            thread.start()

    def wait(self) -> None:
        """Until every runner thread ended; re-raises the first bug one of them hit. (An event, not
        `Thread.join`: a KeyboardInterrupt inside `join` can leave a live thread reported as ended.)"""
        while not self._ended.wait(JOIN_POLL_S):
            pass
        if self._errors:
            raise self._errors[0]

    def in_flight(self) -> int:
        """Tasks being judged now."""
        return len(self._judging)

    def _work(self) -> None:
        try:
            while not self.stop.is_set():
                try:
                    task = self._pending.get_nowait()
                except queue.Empty:
                    return
                self._judging.add(task.name)
                self.on_start(task)
                self._record(self._judge(task))
        except Exception as error:  # a bug: the run stops, the main thread raises it
            self._errors.append(error)
            self.stop.set()
        finally:
            with self._lock:
                self._running -= 1
                if not self._running:
                    self._ended.set()

    def _judge(self, task: SuiteTask) -> TaskOutcome:
        started = time.perf_counter()
        try:
            check_task_file(task.path)  # a task that cannot load is a task error, whether or not it has a candidate
            candidate = self._provide(task)
        except TaskError as error:
            return TaskOutcome.failed(task, TASK_ERROR, str(error), time.perf_counter() - started)
        if candidate is None:
            return TaskOutcome.failed(task, MISSING, f"no candidate for {task.name}", time.perf_counter() - started)
        return self._executor.judge(task, candidate, time.perf_counter() - started)

    def _record(self, outcome: TaskOutcome) -> None:
        with self._lock:
            if self._journal is not None:
                self._journal.append(outcome)
            self.outcomes.append(outcome)
            self._judging.discard(outcome.task)
        self.on_outcome(outcome)
