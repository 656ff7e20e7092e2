"""The reference keeper: a trusted process of the judge's that runs the task's code and never a candidate's.

It holds the task's model on the device, in its own dtype and in float64, and answers for a seed when a
candidate's answer for that seed arrives: it makes the seed's inputs on the device, runs both models,
copies the candidate's shared outputs into its own memory and compares them there. Whole outputs never
cross the host, references are never made ahead for every seed (a task's outputs can be gigabytes each),
and no candidate's process can reach them: the keeper shares nothing and reads only what the worker shared.

Requests and replies are pickled dataclasses on the keeper's stdin and a private stdout (`keeper_frames`):
both ends are the harness's own (`keeper_process`).
"""

from __future__ import annotations

import copy
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch

from kernelpilot.errors import TaskError, one_line
from kernelpilot.harness import guards
from kernelpilot.harness.keeper_frames import KeeperError, frame, read_frame
from kernelpilot.harness.messages import Observed
from kernelpilot.harness.shared_output import copied
from kernelpilot.harness.slices import max_abs_difference
from kernelpilot.harness.spot_check import sample_outputs
from kernelpilot.harness.task import as_outputs, checksum, load_task_module, made_on, make_inputs, to_float64
from kernelpilot.harness.timing import Curve, FreshInputs
from kernelpilot.harness.verify import (
    Answer,
    CallCheck,
    OutputSpec,
    Reference,
    check_call,
    comparison_dtype,
    degenerate_reason,
    judged_at,
    judging_tolerances,
    tolerance,
)

@dataclass(frozen=True)
class Load:
    """Build the task's model; check on `probe_seeds` (none of the candidate's) that it can judge a kernel."""

    task_path: str
    init_seed: int
    probe_seeds: list[int]
    tol: float | None


@dataclass(frozen=True)
class Loaded:
    references: list[Reference]
    """The probe seeds' references: the task's output layouts and eager's own error."""
    problem: str | None
    """Why the task cannot judge a kernel (it does not run, is non-deterministic or degenerate), in
    `kernelpilot eval`'s words."""
    input_bytes: int = 0
    """What one call's tensor inputs hold: the timing holds fewer input sets of a large task."""


@dataclass(frozen=True)
class Prepare:
    """Make the reference answer for `seed` now (no reply): a call of the candidate's for it comes next."""

    seed: int


@dataclass(frozen=True)
class Check:
    """Hold `call` to the reference for its seed; its outputs wait in `scratch` or behind CUDA IPC handles."""

    call: Observed
    scratch: str


@dataclass(frozen=True)
class Checked:
    check: CallCheck
    reference: Reference


@dataclass(frozen=True)
class TimedInputs:
    """One of the candidate's timed runs: its input set's seed, the curve the judge drew for it, and the seed
    of the positions its answers were sampled at."""

    run: int
    seed: int
    curve: Curve
    check_seed: int


@dataclass(frozen=True)
class TimedAnswers:
    """Eager's answers on these timed runs' inputs, at their sampled positions: the references the candidate's
    timed runs are held to (its process never held the runs' curves before their runs)."""

    runs: list[TimedInputs]


@dataclass(frozen=True)
class TimedSamples:
    samples: dict[int, list[torch.Tensor | None]]


class Keeper:
    def __init__(self, device: str) -> None:
        self.device = device
        self.tol: float | None = None
        self.tolerances: list[tuple[float, float, bool]] = []
        """Each output's (atol, rtol, narrowed), from the first probe (`judging_tolerances`)."""
        self.ready: dict[int, Answer] = {}
        """Answers made ahead (`Prepare`), by seed: one at a time."""
        self.input_bytes = 0

    def load(self, request: Load) -> Loaded:
        task_path = Path(request.task_path)
        self.tol, self.tolerances = request.tol, []
        try:
            self.task = load_task_module(task_path)
            init_inputs = self.task.get_init_inputs()
            # as constructed (training mode unless the task says otherwise), as KernelBench runs it
            self.model = made_on(self.device, request.init_seed,
                                 lambda: self.task.Model(*init_inputs)).to(self.device)
            self.model64 = copy.deepcopy(self.model).to(torch.float64)
            answers = [self.answer(seed, check_deterministic=i == 0, float64=False)
                       for i, seed in enumerate(request.probe_seeds)]
            self.tolerances = judging_tolerances(answers[0], self.tol)
            answers = [judged_at(answer, self.tolerances) for answer in answers]
            if any(narrowed for *_, narrowed in self.tolerances):  # eager's own error must stay below the bound
                answers[0] = self.answer(request.probe_seeds[0])
        except TaskError as error:
            return Loaded([], str(error) if str(error).startswith("task ") else f"task {task_path.name}: {error}")
        except Exception as error:  # the task's own code raised
            return Loaded([], f"task {task_path.name}: {one_line(error)}")
        problem = degenerate_reason(answers)
        if problem:
            problem = (f"degenerate task {task_path.name}: {problem}; a trivial answer would pass, so it cannot "
                       "judge a kernel")
        return Loaded([answer.reference for answer in answers], problem, self.input_bytes)

    @torch.no_grad()
    def answer(self, seed: int, check_deterministic: bool = False, float64: bool = True) -> Answer:
        """The reference's answers for `seed`, computed in float64 where every op has a float64 kernel, with
        eager's own error versus them. One seed's tensors at a time: a task's outputs can be gigabytes.
        Without `float64`, eager's answers alone: enough to tell whether the task can judge a kernel."""
        inputs = make_inputs(self.task, seed, self.device)
        input_checksum = checksum(inputs)
        self.input_bytes = sum(x.numel() * x.element_size() for x in inputs if isinstance(x, torch.Tensor))
        native = as_outputs(self.model(*inputs))
        if not all(type(o) is torch.Tensor for o in native):
            kinds = ", ".join(type(o).__name__ for o in native)
            raise TaskError(f"the reference returns {kinds}, not a tensor or a tuple of tensors")
        if any(o.is_complex() for o in native):
            raise TaskError("the reference returns complex tensors, which kernelpilot cannot compare yet")
        if check_deterministic:
            self.check_deterministic(inputs, native)
        inputs64 = to_float64(inputs) if float64 else None
        del inputs
        try:
            ref64 = as_outputs(self.model64(*inputs64)) if inputs64 is not None else native
        except Exception:  # some ops have no float64 kernel: the native answer is the reference
            ref64 = native
        del inputs64
        tolerances = self.tolerances or [(*tolerance(out.dtype, self.tol), False) for out in native]
        specs = [OutputSpec(tuple(out.shape), out.dtype, tuple(out.stride()), guards.is_dense(out),
                            max_abs_difference(ref, out) if out.is_floating_point() and ref is not out else 0.0,
                            *judged_at)
                 for out, ref, judged_at in zip(native, ref64, tolerances)]
        expected = [ref.to(comparison_dtype(out.dtype)) for out, ref in zip(native, ref64)]
        return Answer(Reference(seed, specs, input_checksum), expected)

    def check_deterministic(self, inputs: list[object], native: list[torch.Tensor]) -> None:
        """A second run on the same inputs agrees with the first, or no answer can be held to the reference."""
        for i, (first, again) in enumerate(zip(native, as_outputs(self.model(*inputs)))):
            atol, rtol = tolerance(first.dtype, self.tol)
            same = first.shape == again.shape and (
                torch.allclose(first, again, atol=atol, rtol=rtol, equal_nan=True) if first.is_floating_point()
                else torch.equal(first, again))
            if not same:
                raise TaskError(f"task {Path(self.task.__file__).name} is non-deterministic: output {i} differs "
                                "between two runs on the same inputs")

    def prepare(self, request: Prepare) -> None:
        self.ready = {}  # never more than one seed's tensors held
        try:
            self.ready[request.seed] = self.answer(request.seed)
        except Exception:  # made again, and its error told, when the call for it is checked
            pass

    def check(self, request: Check) -> Checked:
        answer = self.ready.pop(request.call.seed, None) or self.answer(request.call.seed)
        device = torch.device(self.device, 0) if self.device == "cuda" else torch.device("cpu")
        verdict = check_call(request.call, answer, self.device,
                             lambda shared: copied(shared, Path(request.scratch), device))
        return Checked(verdict, answer.reference)

    @torch.no_grad()
    def timed_answers(self, request: TimedAnswers) -> TimedSamples:
        samples, seed, fresh = {}, None, None
        for run in sorted(request.runs, key=lambda run: run.seed):  # each seed's inputs made once (0.8 s at 256 MB)
            if run.seed != seed:
                fresh = None  # one seed's tensors at a time
                seed, fresh = run.seed, FreshInputs([make_inputs(self.task, run.seed, self.device)], 0)
            samples[run.run] = sample_outputs(self.model(*fresh.scaled(0, run.curve)), run.check_seed)
        return TimedSamples(samples)

    def handle(self, request: object) -> object:
        match request:
            case Load():
                return self.load(request)
            case Prepare():
                return self.prepare(request)
            case Check():
                return self.check(request)
            case TimedAnswers():
                return self.timed_answers(request)
        return KeeperError(f"unknown request {type(request).__name__}")


def main() -> None:
    """Serve requests until stdin closes. The task's prints go to stderr: stdout carries the replies."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    device = os.environ.get("KERNELPILOT_KEEPER_DEVICE", "cpu")
    if device == "cuda":
        torch.zeros(1, device="cuda")  # the device's context, made while the judge waits for its task
    keeper, requests = Keeper(device), sys.stdin.buffer
    while True:
        try:
            request = read_frame(requests)
        except EOFError:
            break
        try:
            reply = keeper.handle(request)
            if device == "cuda":
                torch.cuda.empty_cache()  # what this request used goes back to the device, for the worker
        except TaskError as error:
            reply = Loaded([], str(error)) if isinstance(request, Load) else KeeperError(str(error))
        except Exception as error:
            reply = KeeperError(f"{type(error).__name__}: {error}\n{traceback.format_exc()[-3000:]}")
        if reply is not None:
            replies.write(frame(reply))
            replies.flush()
    os._exit(0)
