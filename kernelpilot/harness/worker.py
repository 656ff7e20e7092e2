"""The evaluation worker: the one process that runs a candidate's code (started by `evaluation.WORKER_ENTRY`).

It runs in two halves and the order is the defence:
1. trusted, before any candidate code is imported: load the task and time the baselines; each result is
   sent to the parent at once, so nothing imported later can change it;
2. the candidate: import, construct with the reference's weights, verify over fresh inputs under
   the op audit and the guards, time, re-check after timing, profile.
The worker only observes and reports: each verified call's outputs are shared for the judge's reference
keeper to copy and compare (`shared_output`, `keeper`). The parent judges and rewards.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
import types
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import torch
import torch._dynamo  # noqa: F401  imported now: on import it rebinds torch.manual_seed & co, which the guards watch

from kernelpilot.errors import TaskError, one_line
from kernelpilot.harness import guards, kernels, processes, reach, timing
from kernelpilot.harness.audit import DispatchRecorder, mark_call, watched_ops, watching_calls
from kernelpilot.harness.channel import WorkerChannel
from kernelpilot.harness.messages import (
    Baseline,
    Done,
    Failed,
    Final,
    Imported,
    KernelRows,
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
)
from kernelpilot.harness.shared_output import Snapshot, take_snapshot
from kernelpilot.harness.spot_check import layout_of, sample_outputs
from kernelpilot.harness.task import as_outputs, checksum, import_file, load_task_module, made_on, make_inputs
from kernelpilot.harness.timing import CacheFlusher, Curve, FreshInputs, occupy_stream, time_calls

KERNEL_PROFILE_RUNS = 5
BACKGROUND_READINGS = 3
"""Eager's calls after which other threads' CPU time is read, as after each verified call of the candidate."""


def device_events(profiler: torch.profiler.profile) -> Iterator:
    """What the device ran, from the profiler's raw events: its Python event tree costs minutes for a forward
    of tens of thousands of launches (a recurrent task's)."""
    return (event for event in profiler.profiler.kineto_results.events()
            if event.device_type() == torch.autograd.DeviceType.CUDA)


def device_kernel_rows(profiler: torch.profiler.profile, runs: int) -> list[dict]:
    """Time and launches per run of each kernel the device ran."""
    total_ns: Counter[str] = Counter()
    launches: Counter[str] = Counter()
    for event in device_events(profiler):
        if event.duration_ns() > 0:
            total_ns[event.name()] += event.duration_ns()
            launches[event.name()] += 1
    rows = [{"name": name, "time_ms": ns / 1e6 / runs, "calls": round(launches[name] / runs)}
            for name, ns in total_ns.items()]
    return sorted(rows, key=lambda r: -r["time_ms"])


class CandidateFailure(Exception):
    """The candidate could not be loaded or run; the message is the user-facing verdict."""


def refill(buffers: list[object], fresh: list[object]) -> list[object]:
    """Write new values into the same buffers: an answer cached by address then goes stale (hack 3)."""
    refilled = []
    for old, new in zip(buffers, fresh):
        if isinstance(old, torch.Tensor) and isinstance(new, torch.Tensor) and old.shape == new.shape \
                and old.dtype == new.dtype:
            old.copy_(new)
            refilled.append(old)
        else:
            refilled.append(new)
    return refilled


def compiled_extensions(objects: list[object]) -> frozenset[str]:
    """Names of the extension modules among `objects` that were built for this candidate.

    `load_inline` does not register its module in `sys.modules`, so the candidate's own globals and
    attributes are searched too.
    """
    build_dirs = tuple(filter(None, (os.environ.get("TORCH_EXTENSIONS_DIR"), os.environ.get("KERNELPILOT_CACHE_DIR"))))
    return frozenset(obj.__name__ for obj in objects if isinstance(obj, types.ModuleType)
                     and str(getattr(obj, "__file__", "") or "").startswith(build_dirs))


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


class Worker:
    def __init__(self, job: dict, channel: WorkerChannel) -> None:
        self.job = job
        self.channel = channel
        self.device: str = job["device"]
        self.phase = "setup"
        self.clock_before = guards.c_entry_points(timing._perf_counter)
        self.clock_rewritten = False
        self.switch_interval = sys.getswitchinterval()
        self.switch_interval_changed = False
        self.words = sys.stdin
        """The parent's words, read through the object the worker started with: a candidate that rebinds
        `sys.stdin` hears none of them (red team 33 read the timing's seeds through a wrapper)."""
        self.timed_copies: list[torch.Tensor | None] = []
        self.curve: list[float] | None = None
        """The candidate's next timed run's input curve, as the parent last sent it."""
        self.harness_ops: frozenset[str] = frozenset()

    def live_objects(self) -> dict[str, object]:
        return {"worker": self, "worker.channel": self.channel}

    def enter(self, phase: str) -> None:
        self.phase = phase
        self.channel.send(Phase(phase))

    # --- trusted half --------------------------------------------------------------------------

    def reference(self) -> torch.nn.Module:
        """The reference model, as constructed (training mode unless the task says otherwise, as KernelBench
        runs it), and what the candidate's calls are held to beside its answers: the background CPU time
        after eager's calls, and the size of its outputs."""
        self.enter("setup")
        job, device = self.job, self.device
        self.task = load_task_module(Path(job["task_path"]))
        self.init_inputs = self.task.get_init_inputs()
        model = made_on(device, job["init_seed"], lambda: self.task.Model(*self.init_inputs)).to(device)
        self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        self.output_bytes: list[int] = []
        background_ms: list[float] = []
        with torch.no_grad():
            for seed in job["timing_seeds"][:BACKGROUND_READINGS]:
                inputs = make_inputs(self.task, seed, device)
                outputs = as_outputs(model(*inputs))
                synchronize(device)
                background_ms.append(guards.background_cpu_ms())
                self.output_bytes = [o.numel() * o.element_size() for o in outputs if isinstance(o, torch.Tensor)]
                del inputs, outputs  # one set at a time: a task's tensors can be gigabytes
        self.channel.send(TaskInfo(precision=guards.precision_settings(), training=model.training,
                                   background_cpu_ms=max(background_ms, default=0.0),
                                   device_name=torch.cuda.get_device_name() if device == "cuda" else "cpu",
                                   torch_version=str(torch.__version__)))
        return model

    def baselines(self, model: torch.nn.Module, timing_seeds: list[int]) -> None:
        """Eager and torch.compile timed on exactly the inputs the candidate's timed runs will get.

        Eager's timed runs go through the same bookkeeping as the candidate's (`check_timed_run`): its
        answers, sampled at positions the parent names after each run, are what any timed run of the
        candidate is checked against. A few more of its runs are watched by the profiler, as the candidate's
        will be: on them the parent's own clock learns the harness's share of a watched run, so that what it
        cannot account for in the candidate's runs is the candidate's. The inputs are zeroed before the
        candidate is imported.
        """
        self.enter("baseline")
        job, device = self.job, self.device
        self.flush = CacheFlusher(device, job["l2_flush_bytes"])
        job.pop("timing_seeds")  # the candidate, imported next, must find none of its timing's seeds
        input_sets = [make_inputs(self.task, seed, device) for seed in timing_seeds]
        factor_seed = job.pop("factor_seed")
        compile_samples, latency = {}, {}
        with torch.no_grad():
            eager_inputs = FreshInputs(input_sets, factor_seed)
            recorder = DispatchRecorder()
            with recorder:  # the ATen operators the harness itself runs between timed calls (on inputs of its own)
                FreshInputs([[torch.ones(4, device=device)]], factor_seed).scaled(0)
                self.flush()
            self.harness_ops = frozenset(recorder.ops)
            eager = time_calls(model, eager_inputs, device, job["warmup"], job["timed_runs"], self.flush,
                               after_run=lambda run, output: self.check_timed_run(run, output, wipe=True),
                               before_call=self.await_go, after_call=self.await_return)
            with watching_calls():  # as the candidate's runs will be watched: the parent's clock sees the same
                eager_watched = time_calls(model, eager_inputs, device, 0, job["clock_calibration_runs"], self.flush,
                                           after_run=lambda run, output: self.check_timed_run(run, output, wipe=True),
                                           around=mark_call, before_call=self.await_go, after_call=self.await_return)
            schedules = [eager_inputs]
            for mode in job["compile_modes_to_measure"]:
                compile_inputs = FreshInputs(input_sets, factor_seed)
                schedules.append(compile_inputs)
                try:
                    compiled = torch.compile(model, mode=None if mode == "default" else mode)
                    started = time.perf_counter()
                    compiled(*compile_inputs.scaled(0))
                    synchronize(device)
                    latency[mode] = time.perf_counter() - started
                    compile_samples[mode] = time_calls(compiled, compile_inputs, device, job["warmup"],
                                                       job["timed_runs"], self.flush,
                                                       after_run=lambda run, _: self.await_parent(run)).to_json()
                except Exception as error:  # a model torch.compile cannot handle has no compile baseline
                    compile_samples[mode] = {"error": one_line(error)[:300]}
            for schedule in schedules:
                schedule.wipe()
        self.channel.send(Baseline(eager=eager.to_json(), eager_watched=eager_watched.to_json(),
                                   compile=compile_samples, compile_latency_s=latency))
        if job["compile_modes_to_measure"]:
            torch._dynamo.reset()

    # --- the candidate -----------------------------------------------------------------------

    def load_candidate(self) -> None:
        self.enter("import")
        word = json.loads(self.words.readline() or "{}")
        if word.get("import") is not True:
            raise RuntimeError("the harness never cleared the candidate's import")
        self.functions_before = guards.snapshot_functions()
        self.hooks_before = guards.interpreter_hooks()
        self.dispatch_before = guards.dispatch_tables(self.harness_ops)
        self.bindings_before = guards.instance_bindings(self.live_objects())
        self.reference_before = guards.reference_fingerprint(self.task.Model, self.task)
        self.precision_before = guards.precision_settings()
        self.threads_before = guards.python_threads()
        modules_before = set(sys.modules)
        model_file = Path(word["model_file"])
        reach.watch_reaches([model_file.parent, Path(self.job["scratch"])],
                            lambda what, where: self.channel.send(Reached(what, where)))
        sys.path.insert(0, str(model_file.parent))
        try:
            module = import_file(model_file, "kernelpilot_candidate")
        except kernels.KernelBuildError as error:
            raise CandidateFailure(f"kernels failed to build:\n{error.log}") from None
        except BaseException as error:  # SystemExit and KeyboardInterrupt too: the candidate's code raised them
            raise CandidateFailure(f"importing {model_file.name} failed: {one_line(error)}") from None
        model_class = getattr(module, "ModelNew", None)
        if not isinstance(model_class, type):
            raise CandidateFailure(f"{model_file.name} does not define class ModelNew")
        try:
            self.model = made_on(self.device, self.job["init_seed"],
                                 lambda: model_class(*self.init_inputs)).to(self.device)
        except BaseException as error:
            raise CandidateFailure(f"ModelNew(*get_init_inputs()) failed: {one_line(error)}") from None
        try:
            self.model.load_state_dict(self.state, strict=True)
        except Exception as error:
            raise CandidateFailure(f"ModelNew does not take Model's weights (strict load_state_dict): "
                                   f"{one_line(error)[:600]}") from None
        self.extensions = compiled_extensions(
            [sys.modules[name] for name in set(sys.modules) - modules_before]
            + list(vars(module).values()) + list(vars(self.model).values()) + list(vars(model_class).values()))
        self.channel.send(Imported(sorted(self.extensions), issubclass(model_class, self.task.Model)))
        self.job.update(json.loads(self.words.readline() or "{}"))
        if "verify_seeds" not in self.job:
            raise CandidateFailure("the harness's seeds never arrived (was stdin read by the candidate?)")

    def call(self, inputs: list[object], audit: bool = False, profile: bool = False) -> dict:
        """One observed forward: outputs read on the current stream, then every guard's observation."""
        pristine = guards.inputs_before(inputs)
        guards.poison_free_memory(self.device, self.output_bytes)
        threads_before = guards.python_threads()
        children_cpu_before = processes.reaped_children_cpu_ms()
        launches_before = dict(kernels.launch_counts)
        recorder = DispatchRecorder()
        forward_calls = guards.ForwardCalls(self.extensions)
        # the re-checks and the timed calls run under the all-threads profiler; the verify trials under the
        # dispatch mode alone, so that the background-CPU window sees no profiler threads at work
        profiler = watching_calls(self._activities()) if profile else None
        host_poison = guards.poisoned_host_allocations() if self.device == "cpu" else contextlib.nullcontext()
        if self.device == "cuda" and not profile:  # a kernel queued before the profiler starts stays out of it
            occupy_stream()
        with torch.no_grad(), host_poison:
            timing.reseed()  # as before every timed call: a generator freshly seeded tells neither kind apart
            if profiler:
                profiler.__enter__()
            if audit:
                with mark_call():
                    sys.setprofile(forward_calls)
                    with recorder:
                        outputs = as_outputs(self.model(*inputs))
                    sys.setprofile(None)
            else:
                outputs = as_outputs(self.model(*inputs))
            modes_active = guards.modes_left_active()
            stream_changed = self.device == "cuda" and torch.cuda.current_stream() != self.stream
            # subclassed outputs are never touched: touching them would run their code
            snapshots = [self.snapshot(i, out) if type(out) is torch.Tensor else None for i, out in enumerate(outputs)]
            synchronize(self.device)
            # not on a profiled call: the profiler's own threads work as it stops (CUPTI's buffer flush);
            # the verify trials watch for offloaded work
            background_cpu_ms = None if profile else guards.background_cpu_ms()
            if profiler:
                profiler.__exit__(None, None, None)
        tensors = [o for o in outputs if type(o) is torch.Tensor]
        self.shared_snapshots = snapshots
        return {
            "outputs": [snapshot.shared if snapshot is not None else None for snapshot in snapshots],
            "subclassed": guards.subclassed_outputs(outputs),
            "plain_values": [type(o).__name__ for o in outputs if isinstance(o, guards.PLAIN_VALUES)],
            "devices": [o.device.type for o in outputs if type(o) is torch.Tensor],
            "non_dense": [i for i, o in enumerate(outputs) if type(o) is torch.Tensor
                          and not guards.is_dense(o)],
            "mutated": guards.mutated_inputs(inputs, pristine),
            "aliased": guards.aliased_outputs(tensors, inputs),
            "new_threads": sorted(t.name for t in guards.python_threads() - threads_before if t.is_alive()),
            "background_cpu_ms": background_cpu_ms,
            "child_processes": processes.child_processes(),
            "child_cpu_ms": processes.reaped_children_cpu_ms() - children_cpu_before,
            "ops": dict(recorder.ops),
            "profiler_ops": dict(watched_ops(profiler)[1]) if profiler else {},
            "device_kernels": self._device_kernel_names(profiler) if profiler else [],
            "extension_calls": forward_calls.extension_calls,
            "numpy_calls": forward_calls.numpy_calls,
            "stream_changed": stream_changed,
            "modes_active": modes_active,
            "launches": {k: v - launches_before.get(k, 0) for k, v in kernels.launch_counts.items()
                         if v - launches_before.get(k, 0)},
        }

    def snapshot(self, index: int, output: torch.Tensor) -> Snapshot:
        return take_snapshot(output, Path(self.job["scratch"]) / f"out-{time.monotonic_ns()}-{index}.bin")

    def judged(self) -> None:
        """Wait until the judge has copied the shared outputs, then let them go, with what the call left cached:
        the keeper makes the next call's reference meanwhile."""
        self.words.readline()
        synchronize(self.device)
        for snapshot in self.shared_snapshots:
            if snapshot is not None:
                snapshot.release()
        self.shared_snapshots = []
        self.release_cached_memory()

    def _activities(self) -> list:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.device == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        return activities

    @staticmethod
    def _device_kernel_names(profiler) -> list[str]:
        return sorted({event.name() for event in device_events(profiler)})

    def verify(self) -> None:
        self.enter("verify")
        self.words.readline()  # the judge refuses every process start from here (`process_gate`) before the calls
        buffers = None
        for trial, seed in enumerate(self.job["verify_seeds"]):
            fresh = make_inputs(self.task, seed, self.device)
            buffers = fresh if buffers is None else refill(buffers, fresh)
            del fresh  # one set of a large task's inputs at a time
            observed = self.call(buffers, audit=True)
            self.channel.send(Trial(trial=trial, seed=seed, checksum=checksum(buffers), **observed))
            self.judged()

    def profile(self) -> None:
        self.enter("profile")
        job, device = self.job, self.device
        input_sets = [make_inputs(self.task, seed, device) for seed in job["timing_seeds"]]
        with torch.no_grad(), watching_calls() as watch:
            samples = time_calls(self.model, FreshInputs(input_sets, job["factor_seed"]), device, job["warmup"],
                                 job["timed_runs"], self.flush, after_run=self.check_timed_run, around=mark_call,
                                 before_call=self.await_go, after_call=self.await_return, curves=self.parent_curve)
        calls, ops = watched_ops(watch)
        self.timed_copies = []
        self.release_cached_memory()  # before the Timing message, on which the keeper starts the post-check's answer
        self.channel.send(Timing(samples.to_json(), dict(ops), calls))
        for seed in job["post_seeds"]:
            buffers = refill(input_sets[0], make_inputs(self.task, seed, device))
            observed = self.call(buffers, audit=True, profile=True)
            self.channel.send(PostCheck(seed=seed, checksum=checksum(buffers), **observed))
            self.judged()
        if job["profile_kernels"]:
            self.channel.send(KernelRows(self.kernel_breakdown(input_sets)))

    def release_cached_memory(self) -> None:
        """What torch's allocator holds unused, back to the device: the keeper, another process, makes each float64
        reference beside the worker's calls (for a 6.4 GB output, 32 GB at its peak), and on an 80 GB card what the
        baselines or the calls before left cached here ran it out of memory (KernelBench's 1_19). Poisoned first: memory given back
        can come back to the candidate's own allocations, and must not bring eager's or torch.compile's answers
        with it."""
        if self.device == "cuda":
            guards.poison_free_memory(self.device, [])
            torch.cuda.empty_cache()

    def check_clock(self) -> None:
        """After every timed run and at the end: has compiled code rewritten the clock's C entry points, or
        the candidate shortened the interpreter's switch interval (a thread of its own then takes the GIL
        from the harness within microseconds: red team 32 kept the harness from sending `Ready` so)?"""
        self.clock_rewritten |= guards.c_entry_points(timing._perf_counter) != self.clock_before
        self.switch_interval_changed |= sys.getswitchinterval() != self.switch_interval

    def check_timed_run(self, run: int, output: object, wipe: bool = False) -> None:
        """After every timed run of eager and of the candidate alike: report it; on CUDA, sample the answers
        at the positions the parent names only now (hacks 3, 16: no run can be skipped; on the CPU the
        parent read them at `Returned`). `wipe` zeroes eager's answers once sampled: they must not wait in
        freed memory for the candidate's code."""
        outputs = as_outputs(output)
        self.check_clock()
        if self.device != "cuda":
            if wipe:  # before the report, at which the judge reads the CPU
                _zero(outputs)
            self.await_parent(run)
            return
        snapshot = self.copy_timed_outputs(outputs)
        seed = self.await_parent(run).get("check_seed")
        samples = sample_outputs(snapshot, seed) if isinstance(seed, int) else []
        if samples:
            plain = [type(o) is torch.Tensor for o in outputs]
            self.channel.send(SpotCheck(run, samples, [tuple(o.shape) if p else None for o, p in zip(outputs, plain)],
                                        [tuple(o.stride()) if p else None for o, p in zip(outputs, plain)]))
        if wipe:
            _zero([*samples, *snapshot])

    def copy_timed_outputs(self, outputs: list[object]) -> list[object]:
        """CUDA: a timed run's outputs, copied into buffers kept from run to run (on the CPU the judge reads the
        outputs themselves, the worker stopped): a fresh copy of a 256 MB output
        after each of 66 runs costs the CPU its page faults every time (0.15 s a copy). Subclassed tensors
        stay as they are: touching them would run their code."""
        if len(self.timed_copies) != len(outputs):
            self.timed_copies = [None] * len(outputs)
        copies: list[object] = []
        for i, out in enumerate(outputs):
            if type(out) is not torch.Tensor:
                copies.append(out)
                continue
            kept = self.timed_copies[i]
            if kept is None or kept.shape != out.shape or kept.dtype != out.dtype or kept.device != out.device:
                kept = self.timed_copies[i] = torch.empty(out.shape, dtype=out.dtype, device=out.device)
            copies.append(kept.copy_(out.detach()))
        return copies

    def await_go(self, run: int) -> None:
        """CPU: tell the parent the call of timed run `run` comes next, and wait for its go (see `Ready`)."""
        self.channel.send(Ready(run))
        self.words.readline()

    def await_return(self, run: int, output: object) -> None:
        """CPU: tell the parent the call of timed run `run` returned and where its answers lie, and wait for
        its word (see `Returned`)."""
        self.channel.send(Returned(run, [layout_of(out) for out in as_outputs(output)]))
        self.words.readline()

    def await_parent(self, run: int) -> dict:
        """Report a timed run and wait for the parent's word, after every timed run of eager, torch.compile
        and the candidate alike: the pause (the process sleeps, its caches cool) slows the next
        launch-bound call, and a pause before the candidate's runs alone cost it ~30 µs per call on the H200.
        The word after the candidate's carries the next run's input curve.
        """
        self.channel.send(TimedRun(run))
        word = json.loads(self.words.readline() or "{}")
        self.curve = word.get("curve", self.curve)
        return word

    def parent_curve(self, run: int) -> Curve:
        """The input curve of the candidate's timed run `run`, drawn by the parent only now (see `Warmed`)."""
        if run == 0:
            self.channel.send(Warmed())
            self.curve = json.loads(self.words.readline() or "{}").get("curve")
        if self.curve is None:
            raise RuntimeError(f"the parent sent no input curve for timed run {run}")
        return tuple(self.curve)

    def kernel_breakdown(self, input_sets: list[list[object]]) -> list[dict]:
        kernels.profiling = True
        with torch.no_grad(), torch.profiler.profile(activities=self._activities()) as profiler:
            for i in range(KERNEL_PROFILE_RUNS):
                self.model(*input_sets[i % len(input_sets)])
            synchronize(self.device)
        kernels.profiling = False
        if self.device == "cuda":
            return device_kernel_rows(profiler, KERNEL_PROFILE_RUNS)
        rows = []
        for event in profiler.key_averages():
            if event.key.startswith("aten::"):
                total_us = event.self_cpu_time_total
            elif event.key.startswith("kernelpilot::"):
                total_us = event.cpu_time_total
            else:
                continue
            rows.append({"name": event.key, "time_ms": total_us / 1e3 / KERNEL_PROFILE_RUNS,
                         "calls": round(event.count / KERNEL_PROFILE_RUNS)})
        return sorted(rows, key=lambda r: -r["time_ms"])

    def final_observations(self) -> None:
        self.check_clock()
        self.channel.send(Final(
            patched=guards.changed_functions(self.functions_before)
            + guards.changed_bindings(self.bindings_before, self.live_objects())
            + guards.changed_hooks(self.hooks_before) + guards.changed_dispatch(self.dispatch_before, self.harness_ops) + (
                ["time.perf_counter (the harness's clock: its C entry point was rewritten)"] if self.clock_rewritten
                else []) + (
                ["sys.setswitchinterval (the interpreter's thread switching)"] if self.switch_interval_changed
                else []),
            precision=guards.changed_precision(self.precision_before),
            reference=guards.changed_reference(self.reference_before, self.task.Model, self.task),
            threads=sorted(t.name for t in guards.python_threads() - self.threads_before if t.is_alive()),
            child_processes=processes.child_processes(),
            launch_counts=dict(kernels.launch_counts),
        ))

    def run(self) -> None:
        """Everything on a stream of the harness's own (CUDA): unlike the legacy default stream it
        does not wait for the candidate's other streams, so work hidden there is neither in the
        timed events nor finished when the outputs are read (hack 5)."""
        if self.device != "cuda":
            return self._run()
        self.stream = torch.cuda.Stream()
        with torch.cuda.stream(self.stream):
            self._run()

    def _run(self) -> None:
        model = self.reference()
        self.baselines(model, baseline_go())
        del model
        self.timed_copies = []  # eager's, wiped: the candidate's timed runs keep copies of their own
        self.release_cached_memory()
        try:
            self.load_candidate()
        except CandidateFailure as failure:
            self.channel.send(Failed("import", str(failure)))
            return
        try:
            self.verify()
            self.profile()
        except BaseException as error:  # SystemExit and KeyboardInterrupt from forward are the candidate's too
            self.channel.send(Failed("run", f"{self.phase}: {one_line(error)}"))
        self.final_observations()


def _zero(tensors: list[object]) -> None:
    for tensor in tensors:
        if type(tensor) is torch.Tensor:
            tensor.zero_()


def baseline_go() -> list[int]:
    """The parent's word to time the baselines, with the seeds of the input sets to rotate (as many as the
    task's inputs leave room for): kept nowhere but in the baselines' own frame."""
    go = json.loads(sys.stdin.readline() or "{}")
    if go.get("baseline") is not True:
        raise RuntimeError("the harness never asked for the baselines")
    return go["timing_seeds"]


def main() -> None:
    processes.adopt_orphans()
    if os.environ.get("KERNELPILOT_WORKER_DEVICE") == "cuda":
        torch.zeros(1, device="cuda")  # the device's context, made while the judge waits for the candidate
    line = sys.stdin.readline()
    if not line:  # stopped before any job came
        os._exit(0)
    job = json.loads(line)
    channel = WorkerChannel(job["channel_fd"], Path(job["scratch"]), bytes.fromhex(job.pop("channel_key")))
    worker = Worker(job, channel)
    try:
        worker.run()
        channel.send(Done())
    except Exception as error:
        scope = worker.phase if worker.phase in ("setup", "baseline") else "run"
        scope = "task" if scope == "setup" else scope
        detail = str(error) if isinstance(error, TaskError) else one_line(error)
        detail = f"{worker.phase}: {detail}" if scope == "run" else detail
        channel.send(Failed(scope, detail, traceback.format_exc()[-4000:]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
