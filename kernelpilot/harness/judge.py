"""The verdict: turn what the parent observed of one worker into violations, correctness, timings and the
reward. Runs in the parent.
"""

from __future__ import annotations

import math
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from kernelpilot.errors import TaskError
from kernelpilot.harness.audit import disallowed
from kernelpilot.harness.guards import CHECKS, tamper_findings
from kernelpilot.harness.kernels import declared_launchers
from kernelpilot.harness.protocol import (
    BACKGROUND_CPU_MS,
    CALIBRATION_FACTOR,
    OUTSIDE_CLOCK_FLOOR_MS,
    OUTSIDE_CLOCK_FRAC,
    OUTSIDE_CLOCK_HARNESS_FRAC,
    OUTSIDE_CLOCK_NOISE,
    SIDE_STREAM_SLACK_FRAC,
    SIDE_STREAM_SLACK_MS,
    WARMUP_RUNS,
)
from kernelpilot.harness.result import EvalResult, KernelTime, OutputCheck, Violation
from kernelpilot.harness.messages import Observed
from kernelpilot.harness.observations import Observations
from kernelpilot.harness.reward import milestone_reward
from kernelpilot.harness.sandbox import isolation_kind
from kernelpilot.harness.timing import interquartile_range, median, spread_pct
from kernelpilot.harness.verify import compare_output, stride_problem

if TYPE_CHECKING:
    from kernelpilot.harness.evaluation import Run


def _violation(check: str, detail: str) -> Violation:
    return Violation(check, f"{CHECKS[check]}: {detail}")


def guard_violations(run: Run, obs: Observations) -> list[Violation]:
    """Every guard's verdict, in the order of DESIGN.md § Guards."""
    found: dict[str, list[str]] = {}

    def add(check: str, detail: str) -> None:
        if detail not in found.setdefault(check, []):
            found[check].append(detail)

    for finding in tamper_findings(obs.sources):
        add("tampering", finding)
    for kind in obs.duplicates:
        add("tampering", f"a second '{kind}' message was written to the harness's channel")
    for what in obs.forged:
        add("tampering", f"a message the harness did not send reached its channel: {what}")
    for what in obs.reached:
        add("tampering", f"reached at run time into the worker's frames, memory or libraries: {what}")
    for finding in (finding for findings in obs.linked.values() for finding in findings):
        add("tampering", finding)
    for signum in (n for n in range(1, 65) if obs.new_signal_handlers >> (n - 1) & 1):
        name = signal.Signals(signum).name if signum in signal.valid_signals() else f"signal {signum}"
        add("tampering", f"installed a handler for {name} (work can be done in it when the harness reads the "
                         "output, after the clock stopped)")
    if obs.imported and obs.imported.subclasses_reference:
        add("tampering", "ModelNew subclasses the reference Model")
    watched_calls = WARMUP_RUNS + run.options.timed_runs
    if obs.timing is not None and obs.watched_calls != watched_calls:
        add("tampering", f"the profiler saw {obs.watched_calls} of the {watched_calls} timed and warm-up calls "
                         "(it was switched off)")

    if run.options.policy == "strict":
        for call in obs.observed:
            if ops := disallowed(call.ops) + disallowed(call.profiler_ops):
                add("op_audit", ", ".join(sorted(set(ops))))
            if call.numpy_calls:
                add("op_audit", "numpy computed inside forward")
        if ops := disallowed(obs.timed_ops):
            add("op_audit", f"{', '.join(ops)} in the timed calls")
    eager_background = obs.task_info.background_cpu_ms if obs.task_info else 0.0
    for call in obs.observed:
        if call.mutated:
            add("input_mutation", f"inputs {call.mutated} changed")
        if call.aliased:
            add("output_aliases_input", f"outputs {call.aliased}")
        if call.subclassed:
            add("tensor_subclass", ", ".join(call.subclassed))
        if call.new_threads:
            add("extra_threads", ", ".join(call.new_threads))
        if (call.background_cpu_ms or 0.0) > BACKGROUND_CPU_MS + eager_background:
            add("background_work", f"{call.background_cpu_ms:.1f} ms of CPU in other threads after forward "
                                   f"(after eager's: {eager_background:.1f} ms)")
        if call.child_processes:
            add("child_process", f"running: {', '.join(call.child_processes)}")
        if call.child_cpu_ms > 0.0:
            add("child_process", f"processes run and reaped inside forward used {call.child_cpu_ms:.0f} ms of CPU")
    if obs.processes_seen:
        add("child_process", f"running in the sandbox beside the worker: {', '.join(sorted(obs.processes_seen))}")
    if obs.processes_refused:
        add("child_process", f"started after the model was built (refused): {', '.join(obs.processes_refused[:5])}")
    if obs.reaped_after_import and (reaped := obs.reaped_after_import[1] - obs.reaped_after_import[0]) > 0.0:
        add("child_process", f"processes the worker ran and reaped during the candidate's calls used {reaped:.0f} ms "
                             "of CPU")
    if final := obs.final:
        if final.threads:
            add("extra_threads", ", ".join(final.threads))
        if final.child_processes:
            add("child_process", f"running after timing: {', '.join(final.child_processes)}")
        for label in final.patched:
            add("patched_function", label)
        for change in final.precision:
            add("precision_settings_changed", change)
        for label in final.reference:
            add("reference_tampered", f"{label} was replaced")
    if obs.reference_file_changed:
        add("reference_tampered", "the task file changed on disk")
    for modes in {tuple(call.modes_active) for call in obs.observed} - {()}:
        add("tampering", f"{', '.join(modes)} left active around forward")
    if any(call.stream_changed for call in obs.observed):
        add("stream_changed", "forward returned with another current stream than it was called on")
    by_seed = {ref.seed: ref for ref in obs.references}
    for call in obs.observed:
        ref = by_seed.get(call.seed)
        if ref is not None and not _same_checksum(call.checksum, ref.checksum):
            add("reference_tampered", f"inputs for seed {call.seed} differ from the reference's")
    _check_kernels_launched(run, obs, add)
    _check_side_streams(obs, add)
    _check_outside_clock(run, obs, add)
    return [_violation(check, "; ".join(details)) for check, details in found.items()]


def _same_checksum(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= 1e-6 * max(1.0, abs(y)) for x, y in zip(a, b))


def _check_kernels_launched(run: Run, obs: Observations, add) -> None:
    """Hack 11: every launcher written must run, and some kernel of the candidate's own must run."""
    if not obs.trials:
        return
    launched = {name for trial in obs.trials for name in trial.launches}
    if run.candidate.kernels_dir is not None:
        declared = {s.name for s in declared_launchers(run.candidate.kernels_dir)}
        if unused := sorted(declared - launched):
            add("kernel_not_launched", f"launchers never called: {', '.join(unused)}")
    extension_calls = sum(trial.extension_calls for trial in obs.trials)
    extensions = obs.imported.extensions if obs.imported else []
    if extensions and not extension_calls and not launched:
        add("kernel_not_launched", f"extension {', '.join(extensions)} built but never called")
    if not launched and not extension_calls:
        add("kernel_not_launched", "no kernel of the candidate's own ran during forward")


@dataclass(frozen=True)
class OutsideClock:
    """The candidate's median time as the worker reported it, and as the parent's own clock accounts for it."""

    reported_ms: float
    accounted_ms: float
    allowance_ms: float

    @property
    def unaccounted_ms(self) -> float:
        return self.accounted_ms - self.reported_ms

    def to_json(self) -> dict[str, float]:
        return {"reported_ms": round(self.reported_ms, 4), "accounted_ms": round(self.accounted_ms, 4),
                "allowance_ms": round(self.allowance_ms, 4)}


def outside_clock(obs: Observations, device: str) -> OutsideClock | None:
    """Holes in the worker's clock (a clock rewritten by compiled code, samples changed in its memory), seen
    on clocks the worker cannot touch, with the same harness work around eager's watched runs and the
    candidate's; the most telling of the bounds below.

    On CUDA the parent's wall clock, each run from its answer to the next report: eager's trusted median
    plus the difference of the two medians. On the CPU the worker's CPU time, which load moves far less
    than wall time (two evaluations share two cores in CI), from a go just before each call to a word just
    after it: a call lasts at least its main thread's CPU time, and all its threads' spread over the cores
    the worker may use, less the little the handshakes add (eager's excess over its reported time, where
    it has one: a call can also take longer than its CPU time, waiting). Run by run that is compared with
    the reported time of the same run. The allowance grows with the harness's share, which differs a
    little from eager's runs to the candidate's.
    """
    eager, candidate, watched = obs.timed_loops["eager_watched"], obs.timed_loops["candidate"], obs.eager_watched
    if watched is None or obs.timing is None or min(len(eager.answers), len(candidate.answers)) < 4:
        return None
    floor, frac, share_frac = (OUTSIDE_CLOCK_FLOOR_MS[device], OUTSIDE_CLOCK_FRAC[device],
                               OUTSIDE_CLOCK_HARNESS_FRAC[device])

    def bound(reported: float, accounted: float, harness: float, noise: float = 0.0) -> OutsideClock:
        allowance = floor + OUTSIDE_CLOCK_NOISE * noise + frac * max(accounted, 0.0) + \
            share_frac * max(harness, 0.0)
        return OutsideClock(reported, accounted, allowance)

    if device == "cuda":
        eager_cycles, candidate_cycles = eager.cycles_ms(), candidate.cycles_ms()
        noise = (interquartile_range(eager_cycles) + interquartile_range(candidate_cycles)) / 1.35 / math.sqrt(
            min(len(eager_cycles), len(candidate_cycles)))
        harness = median(eager_cycles) - median(watched.device)
        bounds = [bound(median(obs.timing.device), median(candidate_cycles) - harness, harness, noise)]
    else:
        eager_calls, candidate_calls = eager.cpu_per_call_ms(), candidate.cpu_per_call_ms()
        if eager_calls is None or candidate_calls is None:
            return None
        eager_main, eager_all = eager_calls
        candidate_main, candidate_all = candidate_calls
        cores = max(1, obs.worker_cores)
        reported = median(obs.timing.device[1:len(candidate_main) + 1])

        def excess(cpu: list[float], times: tuple[float, ...], spread: int) -> float:
            """The median run's CPU-derived least time over its reported time (a median: a run the
            other evaluation's load stretched is one run, and a clock that lies in a few runs gains nothing)."""
            return median([used / spread - took for used, took in zip(cpu, times[1:])])

        # the harness's own CPU on the main thread around a call, exactly: eager's excess hides it where eager's
        # call waits for its other threads (a fast single-threaded candidate was then held to the harness's share)
        harness_main = median([window - inside for window, inside in zip(eager_main, watched.call_main_cpu[1:])]) \
            if len(watched.call_main_cpu) > len(eager_main) else 0.0
        bounds = []
        for eager_cpu, candidate_cpu, spread in ((eager_main, candidate_main, 1), (eager_all, candidate_all, cores)):
            share = max(excess(eager_cpu, watched.device, spread), harness_main if spread == 1 else 0.0, 0.0)
            bounds.append(bound(reported, reported + excess(candidate_cpu, obs.timing.device, spread) - share, share))
        # from each report to the next call's return, run by run, the harness's work is eager's (its watched runs',
        # as the candidate's are watched), held to the noise of eager's runs alone (red team 34 spread its own
        # runs' to widen an allowance learned from them too) and a share, as load moves it
        eager_runs, runs = eager.outside_calls_ms(watched.device, cores), candidate.outside_calls_ms(obs.timing.device,
                                                                                                     cores)
        if eager_runs and runs:
            noise = 2 * interquartile_range(eager_runs) / 1.35 / math.sqrt(len(eager_runs))
            bounds.append(OutsideClock(reported, reported + median(runs) - median(eager_runs),
                                       floor + OUTSIDE_CLOCK_NOISE * noise + share_frac * median(eager_runs)))
    return max(bounds, key=lambda clock: clock.unaccounted_ms - clock.allowance_ms)


def _check_outside_clock(run: Run, obs: Observations, add) -> None:
    clock = outside_clock(obs, run.options.device)
    if clock is not None and clock.unaccounted_ms > clock.allowance_ms:
        add("unaccounted_time", f"{clock.reported_ms:.3f} ms reported per run, {clock.accounted_ms:.3f} ms by the "
                                f"judge's clock (allowance {clock.allowance_ms:.3f} ms)")


def _check_side_streams(obs: Observations, add) -> None:
    """Hack 5: the host clock around a device-wide sync exceeds the stream's events by far more than eager's."""
    if obs.timing is None or obs.eager is None:
        return
    gap = median([h - d for h, d in zip(obs.timing.host, obs.timing.device)])
    eager_gap = median([h - d for h, d in zip(obs.eager.host, obs.eager.device)])
    allowed = eager_gap + max(SIDE_STREAM_SLACK_MS, SIDE_STREAM_SLACK_FRAC * median(obs.timing.device))
    if gap > allowed:
        add("side_stream_work", f"host clock {gap:.3f} ms above the events per run (eager: {eager_gap:.3f} ms)")


def correctness(run: Run, obs: Observations) -> tuple[bool, str | None, list[OutputCheck], list[Violation]]:
    """(correct, error, worst output checks, violations found while comparing), from each call's comparison,
    made as it arrived (`Observations.call_checks`)."""
    violations: dict[str, str] = {}
    worst: list[OutputCheck] = []
    error = None
    passed: list[bytes | None] = []
    all_ok = bool(obs.trials) and len(obs.trials) == run.options.trials
    checked: list[tuple[str, Observed]] = [(f"trial {t.trial}", t) for t in obs.trials] + \
        [("re-check after timing", p) for p in obs.post_checks]
    for label, call in checked:
        verdict = obs.call_checks[call.seed]
        if verdict.problem:
            all_ok, error = False, error or f"{label}: {verdict.problem}"
            continue
        checks = verdict.checks
        if not worst or sum(c.mismatched for c in checks) > sum(c.mismatched for c in worst):
            worst = checks
        if verdict.passed:
            passed.append(verdict.fingerprint)
            continue
        all_ok = False
        bad = next((c for c in checks if not c.ok), None)
        if bad is not None:
            error = error or (f"{label}: output {bad.index}: {bad.mismatched}/{bad.numel} elements differ "
                              f"(max abs err {bad.max_abs_err:.3g} > atol {bad.atol:.3g}, rtol {bad.rtol:.3g})")
        if verdict.unwritten:
            violations.setdefault("uninitialized_output", f"{label}: never-written (marked) memory where the "
                                                            "reference has a value")
        if verdict.fingerprint is not None and verdict.fingerprint in passed:
            violations.setdefault("result_caching", f"{label}: same answer as an earlier call with other inputs")
        elif not label.startswith("trial") and len(passed) >= len(obs.trials) and obs.trials:
            violations.setdefault("result_caching", f"answers were right during verification, wrong in {label}")
        if verdict.downcast:
            violations.setdefault("precision_downcast", f"{label}: matches only at fp16 tolerance")
    candidate_spots = obs.timed_loops["candidate"].spot_checks
    if candidate_spots and obs.references and (problem := timed_run_problem(obs)):
        all_ok, error = False, error or f"a timed run: {problem}"
        if len(passed) >= len(obs.trials) > 0:
            violations.setdefault("result_caching", "answers were right during verification, wrong in a timed run")
    all_checked = len(candidate_spots) == run.options.timed_runs
    if obs.trials and all_ok and obs.error is None and (not obs.post_checks or not all_checked):
        all_ok = False
        error = error or "the checks during and after timing were not received"
    return all_ok, error, worst, [_violation(k, v) for k, v in violations.items()]


def timed_run_problem(obs: Observations) -> str | None:
    """The candidate's timed runs drawn after the timing, against eager's answer on the same inputs (the
    keeper's) at the positions drawn for each run.

    The reference here is eager itself, so its own error versus float64 is allowed on top of the
    calibrated tolerance the trials use.
    """
    if not obs.timed_references:
        return "none of its timed runs could be checked"
    spots = obs.timed_loops["candidate"].spot_checks
    expected_shapes = [spec.shape for spec in obs.references[0].outputs]
    for run, references in sorted(obs.timed_references.items()):
        if (spot := spots.get(run)) is None:
            return f"run {run}'s answers were not read"
        if list(spot.shapes) != expected_shapes:
            return f"run {run}: outputs of shapes {spot.shapes}, the reference {expected_shapes}"
        for i, (spec, stride) in enumerate(zip(obs.references[0].outputs, spot.strides)):
            if stride is not None and (problem := stride_problem(i, stride, spec)):
                return f"run {run}, {problem}"
        for i, (sampled, eager) in enumerate(zip(spot.samples, references)):
            if sampled is None:
                return f"run {run}, output {i} is not a plain tensor"
            if sampled.dtype != eager.dtype:
                return f"run {run}, output {i} has dtype {sampled.dtype}, eager {eager.dtype}"
            eager_err = max(ref.outputs[i].eager_max_err for ref in obs.references)
            judged_at = obs.references[0].outputs[i]
            atol, rtol = max(judged_at.atol, CALIBRATION_FACTOR * eager_err) + eager_err, judged_at.rtol
            check = compare_output(0, sampled, eager, atol, rtol)
            if not check.ok:
                return (f"run {run}, output {i}: {check.mismatched}/{check.numel} sampled elements "
                        f"differ (max abs err {check.max_abs_err:.3g} > atol {atol:.3g}, rtol {rtol:.3g})")
    return None


def check_task(task: Path, obs: Observations) -> None:
    """Task problems the worker met end the evaluation with `TaskError` (exit 2): the task, not the candidate,
    is at fault. (The keeper's own checks of the task come first: `PreparedJudge.loaded`.)"""
    if obs.error and obs.error[0] in ("task", "baseline"):
        message = obs.error[1]
        raise TaskError(message if message.startswith("task ") else f"task {task.name}: {message}")


def timings(run: Run, obs: Observations) -> tuple[dict, dict, float | None, float | None]:
    times: dict[str, float | None] = {"eager": None, "compile": None, "candidate": None}
    spread: dict[str, float | None] = {"eager": None, "compile": None, "candidate": None}
    if obs.eager:
        times["eager"], spread["eager"] = median(obs.eager.device), spread_pct(obs.eager.device)
    compiled = {}
    for mode, samples in obs.compile.items():
        if "device" in samples:
            compiled[mode] = list(samples["device"])
            times[f"compile:{mode}"], spread[f"compile:{mode}"] = median(compiled[mode]), spread_pct(compiled[mode])
    if compiled:
        best = min(compiled, key=lambda m: median(compiled[m]))
        times["compile"], spread["compile"] = median(compiled[best]), spread_pct(compiled[best])
    if obs.timing:
        times["candidate"], spread["candidate"] = median(obs.timing.device), spread_pct(obs.timing.device)
    candidate = times["candidate"]
    vs_eager = times["eager"] / candidate if candidate and times["eager"] else None
    vs_compile = times["compile"] / candidate if candidate and times["compile"] else None
    return times, spread, vs_eager, vs_compile


def judge(run: Run, obs: Observations) -> EvalResult:
    check_task(run.task, obs)
    built = obs.imported is not None
    violations = guard_violations(run, obs) if built or obs.forged or obs.duplicates or obs.reached else []
    correct, mismatch, outputs, compare_violations = correctness(run, obs) if built else (False, None, [], [])
    violations += compare_violations
    error = obs.error[1] if obs.error else mismatch
    if obs.error and obs.error[0] == "run" and obs.worker_output.strip():
        error = f"{error}\n{obs.worker_output.strip()[-1500:]}"
    times, spread, vs_eager, vs_compile = timings(run, obs)
    passed = built and correct and not violations and obs.error is None
    return EvalResult(
        task=str(run.task.name),
        candidate=str(run.candidate.path),
        device=run.options.device,
        built=built,
        correct=correct and obs.error is None,
        reward=milestone_reward(passed, vs_eager, vs_compile),
        violations=tuple(violations),
        error=error if not passed else None,
        max_abs_err=max((c.max_abs_err for c in outputs), default=None),
        max_rel_err=max((c.max_rel_err for c in outputs), default=None),
        times_ms=times,
        spread_pct=spread,
        speedup_vs_eager=vs_eager,
        speedup_vs_compile=vs_compile,
        kernels=tuple(KernelTime(r["name"], r["time_ms"], r["calls"]) for r in obs.kernel_rows),
        outputs=tuple(outputs),
        build_log=run.build_log,
        protocol={
            **run.options.describe(),
            **run.seeds,
            "input_sets": len(run.seeds["timing_seeds"]),
            "isolation": isolation_kind(),
            "process_gate": obs.process_gate or "seccomp: every process start after the model is built refused",
            "device_name": run.device_name,
            "torch": torch.__version__,
            "task_sha256": run.task_sha256,
            "precision": obs.task_info.precision if obs.task_info else {},
            "model_mode": ("training" if obs.task_info.training else "eval") if obs.task_info else None,
            "reference_dtype": "float64",
            "tolerances": [{"atol": spec.atol, "rtol": spec.rtol, "narrowed": spec.narrowed}
                           for spec in obs.references[0].outputs] if obs.references else [],
            "compile_cached": sorted(m for m, s in obs.compile.items() if s.get("cached")),
            "compile_scale": {m: s["scale"] for m, s in obs.compile.items() if "scale" in s},
            "compile_errors": {m: s["error"] for m, s in obs.compile.items() if "error" in s},
            "compile_latency_s": obs.compile_latency_s,
            "ignored_messages": obs.ignored,
            "phase_seconds": obs.phase_seconds,
            "outside_clock": clock.to_json() if (clock := outside_clock(obs, run.options.device)) else None,
        },
    )
