"""What the parent gathers from one worker before the verdict: its typed messages, each accepted only in the
phase that may send it, and what the parent saw itself (its own clocks, /proc).

Baseline timings are accepted only before the candidate's code was imported, so nothing the candidate runs
can rewrite them; references never come from the worker (the judge's keeper makes them). Messages the
worker sends once are taken once: a second one
was forged by code in the candidate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from kernelpilot.harness.channel import Received
from kernelpilot.harness.processes import CpuTime
from kernelpilot.harness.messages import (
    Baseline,
    Done,
    Failed,
    Final,
    Imported,
    KernelRows,
    Observed,
    Phase,
    PostCheck,
    Reached,
    Ready,
    Returned,
    SpotCheck,
    TaskInfo,
    TimedRun,
    Timing,
    Trial,
    Warmed,
    WorkerMessage,
)
from kernelpilot.harness.protocol import PHASES
from kernelpilot.harness.timing import Curve, Samples, fresh_curve
from kernelpilot.harness.verify import CallCheck, Reference

TRUSTED_PHASES = frozenset({"start", "setup", "baseline"})
"""Phases before the candidate's import: no code of the candidate's has run in the worker yet."""
CANDIDATE_PHASES = frozenset({"import", "verify", "profile"})

ALLOWED: dict[type[WorkerMessage], frozenset[str] | None] = {
    Phase: None,
    TaskInfo: TRUSTED_PHASES,
    Baseline: TRUSTED_PHASES,
    TimedRun: frozenset({"baseline", "profile"}),
    Warmed: frozenset({"profile"}),
    Ready: frozenset({"baseline", "profile"}),
    Returned: frozenset({"baseline", "profile"}),
    SpotCheck: frozenset({"baseline", "profile"}),
    Imported: frozenset({"import"}),
    Trial: frozenset({"verify"}),
    Timing: frozenset({"profile"}),
    PostCheck: frozenset({"profile"}),
    KernelRows: frozenset({"profile"}),
    Final: CANDIDATE_PHASES,
    Reached: CANDIDATE_PHASES,
    Failed: None,
    Done: None,
}
"""The phases in which each message may arrive (None: any)."""

ONCE = frozenset({Baseline, TaskInfo, Imported, Warmed, Timing, KernelRows, Final})
"""Messages the worker sends exactly once."""

MESSAGE_LIMIT_BYTES = 64 << 20
"""The most a message may hold once the candidate's code could write one: outputs never travel in them."""


@dataclass(frozen=True)
class StoppedRead:
    """CPU: what the parent read of a timed call's end, with every thread of the worker stopped."""

    cpu: CpuTime | None
    spot: SpotCheck | str | None
    """The run's answers at its check positions, or why they could not be read."""


@dataclass
class TimedLoop:
    """One loop of timed runs as the parent saw it, on clocks the worker cannot touch. The worker waits for
    the parent's answer after each run, so between an answer and the next report lies exactly one run and
    the harness's work around it; on the CPU it also waits for a go just before each call and for a word
    as soon as the call returned."""

    arrivals: list[float] = field(default_factory=list)
    """When each run's report reached the parent (`time.perf_counter`)."""
    answers: list[float] = field(default_factory=list)
    """When the parent answered each report."""
    cpu_at_go: list[CpuTime] = field(default_factory=list)
    """CPU: the worker's CPU time at the go before each call."""
    cpu_at_return: list[CpuTime] = field(default_factory=list)
    """CPU: its CPU time when each call had returned (the worker is waiting both times)."""
    cpu_at_report: list[CpuTime] = field(default_factory=list)
    """CPU: its CPU time at each run's report, once the next run's cache flush is done (it waits then too)."""
    spot_checks: dict[int, SpotCheck] = field(default_factory=dict)
    """Each run's answers at the positions the parent named only after the run, by run (eager's are read as
    the candidate's are, so that the harness's work around both loops is the same)."""
    curves: list[Curve] = field(default_factory=list)
    """The candidate's: each timed run's input curve, drawn by the parent just before the run's inputs were
    written (eager's runs draw theirs from a seed)."""

    def cycles_ms(self) -> list[float]:
        """Wall time of each run after the first, with the harness's work around it."""
        return [(arrived - answered) * 1e3 for answered, arrived in zip(self.answers, self.arrivals[1:])]

    def cpu_per_call_ms(self) -> tuple[list[float], list[float]] | None:
        """CPU time the worker used in each call after the first, from the go to its return: its main
        thread's, and all its threads' (exited ones too)."""
        windows = list(zip(self.cpu_at_go, self.cpu_at_return))[1:]
        if len(windows) < 3:
            return None
        return ([back.main_thread - go.main_thread for go, back in windows],
                [back.all_threads - go.all_threads for go, back in windows])

    def outside_calls_ms(self, reported: tuple[float, ...], cores: int) -> list[float] | None:
        """Per call after the first, the CPU the worker used from the previous run's report to the call's return
        beyond what the call may use in its `reported` time: all its threads' from the report to the go (the
        next inputs' fill and `Ready`), its main thread's from the go to the return beyond the reported time,
        and its other threads' there beyond the other `cores` - 1 cores' share of it. The harness's work there
        is eager's too. The next run's answer computed there is in neither the reported time nor the call's
        CPU window (red team 32: before the go, the harness kept from sending it; red team 33: inside the
        harness's own input fill, its message file's open, or by a thread that exits before the go; red team
        34: after `Ready`, on other threads while the main thread waited for the interpreter's lock; red team
        38: on the main thread, by an ATen callback, as the harness opened the call's profiler range; a main thread
        waiting at a parallel op's barrier is no credit: red team 40 saw eager's sums at -4 ms then). One sum
        per run: a candidate that hid its work in one window in some runs and in another in others left each
        window's median an honest run, and a fast reported median needs more than half the runs to hide it.
        From the return to the report lies only the cache flush, before the next run's inputs exist. CPU alone,
        which the other load on the cores moves far less than wall time; no process can work beside the worker
        (`process_gate`)."""
        runs = [go.all_threads - report.all_threads
                + max(0.0, back.main_thread - go.main_thread - took)  # a main thread that waits for others owes nothing
                + max(0.0, (back.all_threads - back.main_thread) - (go.all_threads - go.main_thread) - (cores - 1) * took)
                for report, go, back, took in zip(self.cpu_at_report, self.cpu_at_go[1:], self.cpu_at_return[1:],
                                                  reported[1:])]
        return runs if len(runs) >= 3 else None


@dataclass
class Observations:
    sources: dict[str, str]
    timed_runs: int
    clock_calibration_runs: int
    held_seeds: frozenset[int] = frozenset()
    """The seeds the candidate's trials and re-checks answer, each once."""
    compare: Callable[[Observed], tuple[CallCheck, Reference]] | None = None
    """The keeper's verdict on one call, and its reference for the call's seed."""
    references: list[Reference] = field(default_factory=list)
    """The keeper's references: the task's probes, then one per call compared."""
    task_info: TaskInfo | None = None
    eager: Samples | None = None
    eager_watched: Samples | None = None
    """Eager's runs under the candidate's conditions (the profiler watching), for the parent's clock."""
    compile: dict[str, dict] = field(default_factory=dict)
    compile_latency_s: dict[str, float] = field(default_factory=dict)
    imported: Imported | None = None
    trials: list[Trial] = field(default_factory=list)
    """The trials as they arrived: each was compared on arrival (`call_checks`)."""
    call_checks: dict[int, CallCheck] = field(default_factory=dict)
    """Each trial's and re-check's comparison with the reference, by seed (each seed is answered once)."""
    timing: Samples | None = None
    timed_ops: dict[str, int] = field(default_factory=dict)
    """ATen ops the profiler saw in the candidate's warm-up and timed calls, all of them together."""
    watched_calls: int | None = None
    post_checks: list[PostCheck] = field(default_factory=list)
    timed_references: dict[int, list[torch.Tensor | None]] = field(default_factory=dict)
    """Eager's answers, made by the keeper after the timing, on a few of the candidate's timed runs' inputs
    (drawn then) at the positions the candidate's answers were sampled at, by run."""
    timed_loops: dict[str, TimedLoop] = field(default_factory=lambda: {
        "eager": TimedLoop(), "eager_watched": TimedLoop(), "candidate": TimedLoop()})
    """Eager's timed runs, its runs under the candidate's conditions, and the candidate's, as the parent saw them."""
    kernel_rows: list[dict] = field(default_factory=list)
    final: Final | None = None
    error: tuple[str, str] | None = None
    """(scope, message): scope is task, baseline, import or run."""
    finished: bool = False
    ignored: list[str] = field(default_factory=list)
    reference_file_changed: bool = False
    seen: set[type[WorkerMessage]] = field(default_factory=set)
    duplicates: list[str] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)
    """The candidate's reaches into the worker's frames and memory, as the audit hook saw them."""
    signals_before: int = 0
    """Signals the worker's processes had handlers for when the candidate's import began (a mask)."""
    new_signal_handlers: int = 0
    """Signals the candidate's code added handlers for: work can be faulted in after the clock stopped."""
    processes_seen: set[str] = field(default_factory=set)
    """Processes the judge found in the sandbox beside the worker's Python (below it, or anywhere else) after
    the import, as "pid (name)"."""
    processes_refused: list[str] = field(default_factory=list)
    """Process starts the judge refused once the candidate's model was built, as "pid (name): syscall N"."""
    process_gate: str | None = None
    """Why the worker's process starts could not be put to the judge (None: they were)."""
    reaped_after_import: tuple[float, float] | None = None
    """The worker's reaped children's CPU time (ms) as the judge read it when the calls began, and last."""
    linked: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Shared objects mapped in the worker outside the installation, with what their symbols call (nothing
    for those mapped before the candidate's import)."""
    forged: list[str] = field(default_factory=list)
    """Messages the harness did not send: a bad digest, an unreadable file, a phase out of order."""
    worker_cores: int = 1
    """CPUs the worker may run on: its CPU time over that many is the least wall time it can have taken."""
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of each worker phase ("start" is starting Python and importing torch)."""
    worker_output: str = ""

    @property
    def observed(self) -> list[Observed]:
        """Every audited call: the trials, then the re-checks after timing."""
        return [*self.trials, *self.post_checks]

    def go(self, phase: str, ready: Ready, cpu: CpuTime | None) -> None:
        """CPU: the parent's go before a timed call, with the worker's CPU time then."""
        loop = self.timed_loops["candidate"] if phase == "profile" else next(
            (self.timed_loops[name] for name, runs in (("eager", self.timed_runs),
                                                      ("eager_watched", self.clock_calibration_runs))
             if len(self.timed_loops[name].cpu_at_go) < runs), None)
        if loop is None or ready.run != len(loop.cpu_at_go) or len(loop.cpu_at_go) != len(loop.arrivals):
            self.duplicates.append("ready")
        elif cpu is not None:
            loop.cpu_at_go.append(cpu)

    def returned(self, phase: str, returned: Returned, read: StoppedRead) -> None:
        """CPU: the parent's word after a timed call returned, with what it read of the worker stopped."""
        loop = self.timed_loops["candidate"] if phase == "profile" else next(
            (loop for loop in (self.timed_loops["eager"], self.timed_loops["eager_watched"])
             if len(loop.cpu_at_return) < len(loop.cpu_at_go)), None)
        if loop is None or returned.run != len(loop.cpu_at_return) or len(loop.cpu_at_go) != returned.run + 1:
            self.duplicates.append("returned")
            return
        if read.cpu is not None:
            loop.cpu_at_return.append(read.cpu)
        if isinstance(read.spot, SpotCheck):
            loop.spot_checks[read.spot.run] = read.spot
        elif read.spot is not None:
            if phase in TRUSTED_PHASES:
                raise RuntimeError(f"eager's {read.spot}")
            self.forged.append(read.spot)

    def first_curve(self) -> dict:
        """The parent's answer to `Warmed`: the candidate's first timed run's input curve."""
        curve = fresh_curve()
        self.timed_loops["candidate"].curves.append(curve)
        return {"curve": curve}

    def answer_timed_run(self, phase: str, report: TimedRun, received_at: float, check_seeds: list[int],
                         device: str, cpu: CpuTime | None = None) -> dict:
        """The parent's answer after each timed run of eager and of the candidate: on CUDA the seed of the
        positions to check (on the CPU the parent has read them already, at `Returned`), and for the
        candidate the next run's input curve. The worker reports runs once each and in order: any other
        report was forged to learn the seeds. torch.compile's runs (after eager's) get no seed."""
        loop = self._loop(phase)
        if loop is None:
            return {}
        expected = len(loop.arrivals)
        loop.arrivals.append(received_at)
        if report.run != expected or not 0 <= expected < len(check_seeds):
            self.duplicates.append("timed_run")
            return {}
        if cpu is not None:
            loop.cpu_at_report.append(cpu)
        answer: dict = {"check_seed": check_seeds[expected]} if device == "cuda" else {}
        if phase == "profile" and expected + 1 < self.timed_runs:
            answer["curve"] = fresh_curve()
            loop.curves.append(answer["curve"])
        return answer

    def answered_timed_run(self, phase: str, at: float) -> None:
        loop = self.timed_loops["candidate"] if phase == "profile" else self._loop(phase, answered=True)
        if loop is not None and len(loop.answers) < len(loop.arrivals):
            loop.answers.append(at)

    def _loop(self, phase: str, answered: bool = False) -> TimedLoop | None:
        """The loop a timed run reported in `phase` belongs to: in the baseline, eager's runs, then eager's
        watched runs, then torch.compile's (None: no checks, no clock); in the profile, the candidate's."""
        if phase != "baseline":
            return self.timed_loops["candidate"]
        for name, runs in (("eager", self.timed_runs), ("eager_watched", self.clock_calibration_runs)):
            loop = self.timed_loops[name]
            if len(loop.answers if answered else loop.arrivals) < runs:
                return loop
        return None

    def _spot_checked_loop(self, phase: str) -> TimedLoop | None:
        """The loop whose last answered run has no spot check yet."""
        if phase == "profile":
            return self.timed_loops["candidate"]
        return next((loop for loop in (self.timed_loops["eager"], self.timed_loops["eager_watched"])
                     if len(loop.spot_checks) < len(loop.answers)), None)

    def message_limit(self, phase: str) -> int | None:
        """The most bytes a message may hold once the candidate's code has run: no file the candidate names
        on the channel can exhaust the judge."""
        return None if phase in TRUSTED_PHASES else MESSAGE_LIMIT_BYTES

    def moves_on(self, phase: str, new_phase: str) -> bool:
        """The worker's phases only move forward: a phase message that goes back (to a trusted phase,
        whose messages rewrite the references) or names no phase is forged, and ignored."""
        if new_phase in PHASES and PHASES.index(new_phase) > PHASES.index(phase):
            return True
        self.forged.append(f"phase '{new_phase[:40]}' after '{phase}'")
        return False

    def _answers_fresh_seed(self, call: Observed, answered: list[Observed]) -> bool:
        """A trial or re-check answers a seed it was given, once: any other was forged."""
        if call.seed in self.held_seeds - {earlier.seed for earlier in answered}:
            return True
        self.forged.append(f"a {call.kind} for seed {call.seed!r}, which has no reference or was answered")
        return False

    def _compare(self, call: Observed) -> None:
        """`call` held to its seed's reference now, by the keeper, while the worker waits with its outputs."""
        assert self.compare is not None, "calls are compared only in an evaluation"
        self.call_checks[call.seed], reference = self.compare(call)
        self.references.append(reference)

    def fail(self, phase: str, message: str) -> None:
        scope = "task" if phase in TRUSTED_PHASES else ("import" if phase == "import" else "run")
        if self.error is None:
            self.error = (scope, message)

    def receive(self, received: Received, phase: str) -> None:
        message = received.message
        if message is None:
            self.forged.append(received.problem or "an unreadable message")
            return
        allowed = ALLOWED[type(message)]
        if allowed is not None and phase not in allowed:
            self.ignored.append(f"{message.kind} in {phase}")
            return
        if type(message) in ONCE and type(message) in self.seen:
            self.duplicates.append(message.kind)
            return
        self.seen.add(type(message))
        match message:
            case Phase() | Warmed() | TimedRun() | Ready() | Returned():
                pass  # acted on by the evaluation loop itself
            case Baseline():
                self.eager = Samples.from_json(message.eager)
                self.eager_watched = Samples.from_json(message.eager_watched)
                self.compile.update(message.compile)
                self.compile_latency_s.update(message.compile_latency_s)
            case TaskInfo():
                self.task_info = message
            case Imported():
                self.imported = message
            case Trial():
                if self._answers_fresh_seed(message, self.trials):
                    self._compare(message)
                    self.trials.append(message)
            case SpotCheck():
                loop = self._spot_checked_loop(phase)
                if loop is None or message.run not in set(range(len(loop.arrivals))) - set(loop.spot_checks):
                    self.duplicates.append("spot_check")  # a run not yet answered, or one checked twice
                    return
                loop.spot_checks[message.run] = message
            case Timing():
                self.timing = Samples.from_json(message.candidate)
                self.timed_ops, self.watched_calls = message.ops, message.watched_calls
            case PostCheck():
                if self._answers_fresh_seed(message, self.post_checks):
                    self._compare(message)
                    self.post_checks.append(message)
            case KernelRows():
                self.kernel_rows = list(message.rows)
            case Final():
                self.final = message
            case Reached():
                self.reached.append(f"{message.what} from {message.where}")
            case Failed():
                scope = message.scope
                if phase not in TRUSTED_PHASES and scope in ("task", "baseline"):
                    scope = "run"  # the candidate's process cannot declare the task broken
                if self.error is None:
                    self.error = (scope, message.message)
            case Done():
                self.finished = True
