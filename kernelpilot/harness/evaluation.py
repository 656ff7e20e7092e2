"""`evaluate()`: the evaluation protocol of DESIGN.md, top to bottom, judged in this (the parent) process.

judge prepared (`prepared`: a sandboxed worker loading the task and the judge's reference keeper building its
model, perhaps while the agent thought) → build (here) → worker: baselines, then the candidate, each verified
call's outputs shared with the keeper, which compares them with float64 on the device → judge here: guards,
timing, reward. The worker's process is never trusted with the verdict: it sends observations; comparisons,
timing arithmetic and the reward happen in the judge's processes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from kernelpilot.harness import baselines, linked, ncu, processes
from kernelpilot.harness.build import backend_of, build_kernels
from kernelpilot.harness.judge import check_task, judge
from kernelpilot.harness.keeper import TimedInputs
from kernelpilot.harness.keeper_process import KeeperFailure
from kernelpilot.harness.messages import (
    Done,
    Final,
    Imported,
    Phase,
    PostCheck,
    Ready,
    Returned,
    SpotCheck,
    TimedRun,
    Timing,
    Trial,
    Warmed,
)
from kernelpilot.harness.observations import TRUSTED_PHASES, Observations, StoppedRead
from kernelpilot.harness.prepared import PreparedJudge, prepare_judge
from kernelpilot.harness.protocol import (
    CHECKED_TIMED_RUNS,
    CLOCK_CALIBRATION_RUNS,
    DEFAULT_SETUP_TIMEOUT_S,
    EvalOptions,
)
from kernelpilot.harness.result import EvalResult
from kernelpilot.harness.sandbox import isolation_kind, sandboxed
from kernelpilot.harness.spot_check import UnreadableOutput, read_samples
from kernelpilot.harness.task_files import Candidate, locate_candidate, sha256_file
from kernelpilot.harness.worker_process import compiling, death_signal, stop_worker, worker_env, worker_pid

LogSink = Callable[[str], None]
POLL_S = 0.5

PHASE_LIMITS = {"start": "setup", "setup": "setup", "baseline": "setup", "import": "build", "verify": "run", "profile": "run"}
"""Which budget each worker phase draws on: setup (reference, baselines), build, run (verify + profile)."""


def candidate_sources(candidate: Candidate) -> dict[str, str]:
    """The candidate's own files, by path relative to it, for the tamper scan and the result."""
    files = [candidate.model_file]
    if candidate.kernels_dir:
        files += sorted(p for p in candidate.kernels_dir.iterdir() if p.is_file())
    base = candidate.path if candidate.path.is_dir() else candidate.path.parent
    return {str(p.relative_to(base)): p.read_text(errors="replace") for p in files}


@dataclass
class Run:
    """Everything one evaluation gathers before the verdict."""

    task: Path
    candidate: Candidate
    options: EvalOptions
    scratch: Path
    task_sha256: str
    task_bytes: int
    device_name: str
    seeds: dict
    cached_compile: dict[str, dict] = field(default_factory=dict)
    build_log: str = ""


def evaluate(task: str | Path, candidate: str | Path, options: EvalOptions = EvalOptions(),
             on_log: LogSink | None = None, prepared: PreparedJudge | None = None) -> EvalResult:
    """Evaluate `candidate` against `task`. Raises `TaskError` / `CandidateError` / `UsageError` for unusable input.

    `prepared`, from `prepare_judge` ahead of time, is used if it was prepared for this task and `options`
    (and discarded either way); otherwise a judge is prepared here, to make the references while the
    kernels build.
    """
    task_path = Path(task).resolve()
    if prepared is None or not prepared.suits(task_path, options):
        if prepared is not None:
            prepared.discard()
        prepared = prepare_judge(task_path, options)
    try:
        located = locate_candidate(Path(candidate).resolve())
        run = Run(prepared.private_task, located, options, prepared.worker.scratch, prepared.task_sha256,
                  prepared.task_bytes, prepared.device_name, prepared.seeds, dict(prepared.cached_compile))
        return _evaluate(run, prepared, task_path, on_log or (lambda line: None))
    finally:
        prepared.discard()


def _evaluate(run: Run, prepared: PreparedJudge, original_task: Path, log: LogSink) -> EvalResult:
    options = run.options
    observations = Observations(sources=candidate_sources(run.candidate), timed_runs=options.timed_runs,
                                clock_calibration_runs=CLOCK_CALIBRATION_RUNS,
                                held_seeds=frozenset(run.seeds["verify_seeds"] + run.seeds["post_seeds"]),
                                compare=prepared.compare)
    if run.candidate.kernels_dir is not None:
        backend = backend_of(run.candidate.kernels_dir)
        if backend != options.device:
            return _early_failure(run, original_task, f"kernels/ holds {backend} sources but the evaluation "
                                  f"device is {options.device}")
        started = time.monotonic()
        build = build_kernels(run.candidate.kernels_dir, backend, on_log=log, timeout_s=options.build_timeout_s)
        observations.phase_seconds["build"] = round(time.monotonic() - started, 3)
        run.build_log = build.log
        if not build.ok:
            return _early_failure(run, original_task, "kernels failed to build:\n" + build.log)

    _run_worker(run, prepared, observations, log)
    observations.reference_file_changed = any(_changed(path, run) for path in (original_task, run.task))
    for mode, samples in observations.compile.items():
        if mode in prepared.modes_to_measure and "error" not in samples:
            baselines.store(prepared.compile_keys[mode], baselines.entry(samples, observations.eager,
                                                                         observations.compile_latency_s.get(mode)))
    for mode, cached in run.cached_compile.items():
        observations.compile[mode] = baselines.in_this_run(cached, observations.eager)
    result = judge(run, observations)
    if options.ncu and options.device == "cuda":
        result = _with_ncu_metrics(run, result, log)
    return result


def _changed(task: Path, run: Run) -> bool:
    """The task file is not the one evaluated: its size is checked first, so a sparse terabyte put in place
    of the private copy is never read."""
    try:
        return task.stat().st_size != run.task_bytes or sha256_file(task) != run.task_sha256
    except OSError:
        return True


def _with_ncu_metrics(run: Run, result: EvalResult, log: LogSink) -> EvalResult:
    """Nsight Compute's counters for a candidate that passed, read after (and apart from) the verdict."""
    metrics: tuple = ()
    if not result.passed:
        status = "not run: the candidate did not pass"
    elif shutil.which("ncu") is None:
        status = "not run: ncu is not on PATH (install Nsight Compute for bandwidth and occupancy)"
    else:
        log("[ncu]")
        job = {"task_path": str(run.task), "model_file": str(run.candidate.model_file),
               "init_seed": run.seeds["init_seed"], "seed": run.seeds["verify_seeds"][0]}
        cmd = sandboxed(ncu.command(job), writable=[run.scratch], proc_read_only=False)
        try:
            metrics = ncu.run(cmd, worker_env(run.scratch, "cuda", run.options.env), run.options.timeout_s)
            status = "ok"
        except ncu.NcuError as error:
            status = f"failed: {error}"
    return replace(result, ncu=metrics, protocol={**result.protocol, "ncu": status})


def _early_failure(run: Run, original_task: Path, error: str) -> EvalResult:
    return EvalResult(task=str(original_task), candidate=str(run.candidate.path), device=run.options.device,
                      built=False, error=error, build_log=run.build_log,
                      protocol={**run.options.describe(), "isolation": isolation_kind()})


def _candidate_job(run: Run) -> dict:
    """What the worker learns only once the candidate is imported: nothing can be precomputed at import."""
    return {key: run.seeds[key] for key in ("verify_seeds", "timing_seeds", "post_seeds", "factor_seed")}


def _drawn_timed_runs(run: Run, observations: Observations) -> list[TimedInputs]:
    """A few of the candidate's timed runs, drawn only now that they are over, with what made their inputs."""
    curves, seeds = observations.timed_loops["candidate"].curves, run.seeds["timing_seeds"]
    drawn = secrets.SystemRandom().sample(range(len(curves)), min(CHECKED_TIMED_RUNS, len(curves)))
    return [TimedInputs(i, seeds[i % len(seeds)], curves[i], run.seeds["check_seeds"][i]) for i in sorted(drawn)]


def _run_worker(run: Run, prepared: PreparedJudge, observations: Observations, log: LogSink) -> None:
    """Let the prepared worker go on to the baselines, feed its messages to `observations`, enforce each
    phase's time limit."""
    options, worker = run.options, prepared.worker
    process = worker.process
    prepared.stop_draining()
    early, channel = prepared.setup_messages, prepared.channel
    waited = time.monotonic()
    observations.references.extend(prepared.loaded())  # the keeper is idle from here until the first trial
    observations.phase_seconds["keeper_wait"] = round(time.monotonic() - waited, 3)
    run.seeds["timing_seeds"] = prepared.timing_seeds()
    worker.send({"baseline": True, "timing_seeds": run.seeds["timing_seeds"]})
    limits = {"setup": DEFAULT_SETUP_TIMEOUT_S, "build": options.build_timeout_s, "run": options.timeout_s}
    phase, budget_started = "start", time.monotonic()
    phase_started = started = last_poll = budget_started
    python_pid: int | None = None
    import_idle_s = 0.0  # import time with no compiler running: held to --timeout (a loop at import is no build)
    try:
        while True:
            budget = PHASE_LIMITS.get(phase, "run")
            try:
                received = early.popleft() if early else channel.receive(
                    min(budget_started + limits[budget], time.monotonic() + POLL_S), observations.message_limit(phase))
            except TimeoutError:
                if worker.gate.refused:  # the verdict is in; the candidate may be waiting on its helper forever
                    observations.fail(phase, f"stopped in {phase}: the candidate started a process")
                    break
                now = time.monotonic()
                if budget == "build" and not compiling(process.pid):
                    import_idle_s += now - last_poll
                last_poll = now
                if now < budget_started + limits[budget] and import_idle_s < options.timeout_s:
                    continue
                limit = {"run": "limit for verify + profile", "setup": "limit for setup",
                         "build": f"limit: --timeout {options.timeout_s:g} s while no compiler runs, "
                                  "--build-timeout in all"}[budget]
                observations.fail(phase, f"timed out after {now - phase_started:.0f} s in {phase} ({limit})")
                break
            last_poll = time.monotonic()
            if received is None:
                break
            message = received.message
            if python_pid is None:
                python_pid = worker_pid(process.pid)
                observations.worker_cores = len(os.sched_getaffinity(python_pid)) if python_pid else 1
            if isinstance(message, Phase) and observations.moves_on(phase, message.name):
                if PHASE_LIMITS.get(message.name) != PHASE_LIMITS.get(phase):
                    budget_started = time.monotonic()
                now = time.monotonic()
                observations.phase_seconds[phase] = round(now - phase_started, 3)
                phase, phase_started = message.name, now
                log(f"[{phase}]")
            try:
                observations.receive(received, phase)
                # not between timed runs: the longer pause slowed the next call on the H200 (read as side-stream
                # work)
                if isinstance(message, (Phase, Timing, Final)) and phase not in TRUSTED_PHASES:
                    _inspect_worker(process.pid, python_pid, observations, phase)
            except Exception as error:  # whatever the candidate made that the judge cannot read is a verdict
                if phase in TRUSTED_PHASES or isinstance(error, KeeperFailure):
                    raise
                observations.forged.append(f"a {type(message).__name__} message the judge could not read "
                                           f"({type(error).__name__}: {str(error)[:200]})")
            if observations.forged:  # the verdict is in: code in the candidate writes to the channel
                break
            check_task(run.task, observations)
            if isinstance(message, Done):
                break
            if process.stdin.closed:
                continue
            match message:
                case Phase(name="import") if phase == "import":
                    worker.send({"import": True, "model_file": str(run.candidate.model_file)})  # every earlier
                    # message is read and deleted
                case Imported():
                    worker.send(_candidate_job(run))
                case Phase(name="verify") if phase == "verify":  # the model is built: no process starts from here
                    worker.gate.shut()
                    worker.send({})
                    _answer_ahead(prepared, run.seeds["verify_seeds"], 0)
                case Trial():  # compared: the worker may let its outputs go
                    worker.send({})
                    _answer_ahead(prepared, run.seeds["verify_seeds"], len(observations.trials))
                case PostCheck():
                    worker.send({})
                    if len(observations.post_checks) >= len(run.seeds["post_seeds"]):
                        process.stdin.close()
                    else:
                        _answer_ahead(prepared, run.seeds["post_seeds"], len(observations.post_checks))
                case Warmed() if not observations.timed_loops["candidate"].curves:
                    worker.send(observations.first_curve())
                case Ready():  # CPU only
                    observations.go(phase, message, processes.cpu_time(python_pid) if python_pid else None)
                    worker.send({})
                case Returned():  # CPU only
                    observations.returned(phase, message, _read_stopped(python_pid, message, run.seeds["check_seeds"]))
                    worker.send({})
                case TimedRun():  # on CUDA the wall clock alone: reading /proc between runs slowed the next launch
                    cpu = processes.cpu_time(python_pid) if python_pid and run.options.device == "cpu" else None
                    worker.send(observations.answer_timed_run(phase, message, received.received_at,
                                                              run.seeds["check_seeds"], run.options.device, cpu))
                    observations.answered_timed_run(phase, time.perf_counter())
                case Timing():  # the timing is over: the keeper may work beside the worker again
                    observations.timed_references = prepared.timed_answers(_drawn_timed_runs(run, observations))
                    _answer_ahead(prepared, run.seeds["post_seeds"], 0)
    finally:
        observations.phase_seconds[phase] = round(time.monotonic() - phase_started, 3)
        observations.phase_seconds["worker_total"] = round(time.monotonic() - started, 3)
        stop_worker(worker)
    observations.processes_refused, observations.process_gate = worker.gate.refused, worker.gate.unavailable
    observations.worker_output = "\n".join(line for line in worker.output.text().splitlines()[-40:]
                                           if not line.startswith("USDT:"))
    if observations.finished or observations.error:
        return
    whose = "the task's" if phase in TRUSTED_PHASES else "the candidate's"  # no candidate code ran before import
    if (signum := death_signal(process.returncode)) == signal.SIGKILL:
        observations.fail(phase, f"{whose} process was killed (SIGKILL) during {phase}: out of memory, most likely "
                                 "(the kernel's OOM killer takes it first)")
    elif signum:
        observations.fail(phase, f"{whose} process crashed ({signal.Signals(signum).name}) during {phase}")
    else:
        observations.fail(phase, f"{whose} process exited (status {process.returncode}) during {phase}")


def _read_stopped(pid: int | None, returned: Returned, check_seeds: list[int]) -> StoppedRead:
    """CPU: the worker's CPU time and the run's answers at the positions of its check seed, read with every
    thread of it stopped, as its clock stopped; or why the answers could not be read."""
    if pid is None or not 0 <= returned.run < len(check_seeds):
        return StoppedRead(processes.cpu_time(pid) if pid else None, None)
    try:
        with processes.stopped(pid):
            cpu = processes.cpu_time(pid)
            samples, shapes = read_samples(pid, returned.outputs, check_seeds[returned.run])
    except (OSError, TimeoutError, UnreadableOutput) as error:
        return StoppedRead(processes.cpu_time(pid), f"run {returned.run}'s answers could not be read: {error}")
    strides = [layout.stride if layout else None for layout in returned.outputs]
    return StoppedRead(cpu, SpotCheck(returned.run, samples, shapes, strides))


def _answer_ahead(prepared: PreparedJudge, seeds: list[int], index: int) -> None:
    """Have the keeper make the answer for the `index`th of `seeds` while the worker runs that call (never while
    anything is timed): it is ready when the call's outputs arrive."""
    if index < len(seeds):
        prepared.answer_ahead(seeds[index])


def _inspect_worker(root: int, python_pid: int | None, observations: Observations, phase: str) -> None:
    """What the candidate's processes set up, read from /proc: each shared object newly mapped, scanned for
    calls the candidate must not make, signal handlers, and once its calls begin, the processes in the sandbox
    beside the worker's Python and the CPU time of those it reaped (what the worker reports of them, its own code can
    blind: the candidate's runs there).

    What is there when the import begins (the worker waits for the parent's word then) is the harness's:
    torch.compile's generated baseline kernels, the interpreter's and torch's own handlers.
    """
    if phase != "import" and python_pid is not None:
        observations.processes_seen |= {f"{pid} ({name})" for pid, name in processes.beside(python_pid, root).items()}
        if (cpu := processes.cpu_time(python_pid)) is not None:
            first = observations.reaped_after_import
            observations.reaped_after_import = (first[0] if first else cpu.reaped_children, cpu.reaped_children)
    pids = list(processes.descendants(root))
    signals = processes.caught_signals(pids)
    if phase == "import":
        observations.signals_before = signals
    else:
        observations.new_signal_handlers |= signals & ~observations.signals_before
    for path, readable in linked.mapped_libraries(pids).items():
        if path not in observations.linked:
            observations.linked[path] = () if phase == "import" else linked.linked_findings(path, readable)
