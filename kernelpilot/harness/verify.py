"""Correctness, judged in the parent: candidate outputs against the float64 reference.

Tolerance is by output dtype (`protocol.TOLERANCE`), narrowed for an output a constant would pass at it
(`judging_tolerances`), and calibrated against the eager baseline's own error versus float64: a candidate
is never held to more than the baseline it is timed against (cuDNN convolutions run in TF32 by default
while matmuls do not).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch

from kernelpilot.harness.messages import Observed
from kernelpilot.harness.protocol import CALIBRATION_FACTOR, DISCRIMINATION, TOLERANCE
from kernelpilot.harness.result import Mismatch, OutputCheck
from kernelpilot.harness.shared_output import SharedOutput
from kernelpilot.harness.slices import aligned_slices

FIRST_MISMATCHES = 8
GRID_ROWS, GRID_COLS = 8, 16
HALF_PRECISION_TOL = TOLERANCE["torch.float16"]


@dataclass(frozen=True)
class OutputSpec:
    """One output of eager's answer, as far as the judge needs it: its layout and its own error versus float64."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    stride: tuple[int, ...]
    dense: bool
    eager_max_err: float
    atol: float
    rtol: float
    """The tolerance this output is judged at (before calibration): its dtype's, or narrowed."""
    narrowed: bool = False


@dataclass(frozen=True)
class Reference:
    """What the judge keeps of one seed's reference: its outputs' layouts and errors, and its inputs' checksum."""

    seed: int
    outputs: list[OutputSpec]
    checksum: list[float]


@dataclass(frozen=True)
class Answer:
    """One seed's reference answers, in the dtype each is compared in: the keeper's alone (`keeper`)."""

    reference: Reference
    expected: list[torch.Tensor]


def comparison_dtype(dtype: torch.dtype) -> torch.dtype:
    """float64 for float64 outputs, float32 for other floating ones (it resolves errors far below every
    lower-precision tolerance, at half float64's memory), the native dtype otherwise."""
    if dtype == torch.float64 or not dtype.is_floating_point:
        return dtype
    return torch.float32


def tolerance(dtype: torch.dtype, override: float | None) -> tuple[float, float]:
    if override is not None:
        return override, override
    return TOLERANCE.get(str(dtype), (0.0, 0.0))


def calibrated_atol(spec: OutputSpec, atol: float) -> float:
    """atol, raised to CALIBRATION_FACTOR × the eager baseline's own max error versus float64."""
    return max(atol, CALIBRATION_FACTOR * spec.eager_max_err)


def _unravel(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        flat_index, rest = divmod(flat_index, size)
        index.append(rest)
    return tuple(reversed(index))


def _first_positions(bad: torch.Tensor, count: int) -> list[tuple[int, ...]]:
    """The first `count` mismatching indices, scanning in chunks so a wholly wrong tensor costs little."""
    flat, found = bad.reshape(-1), []
    for start in range(0, flat.numel(), 1 << 16):
        hits = flat[start:start + (1 << 16)].nonzero().flatten()[: count - len(found)] + start
        found += [_unravel(int(h), tuple(bad.shape)) for h in hits]
        if len(found) >= count:
            break
    return found


def _error_grid(err: torch.Tensor) -> tuple[tuple[float, ...], ...]:
    """Max error by block of the output seen as 2-D: where in the tensor it goes wrong."""
    if err.numel() == 0:
        return ()
    flat = err.reshape(err.shape[0], -1) if err.dim() >= 2 else err.reshape(1, -1)
    grid = torch.nn.functional.adaptive_max_pool2d(flat.float()[None, None], (min(GRID_ROWS, flat.shape[0]),
                                                                              min(GRID_COLS, flat.shape[1])))
    return tuple(tuple(row) for row in grid[0, 0].tolist())


def _finite(value: float) -> float:
    return value if math.isfinite(value) else float("inf")


def compare_output(index: int, actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> OutputCheck:
    """Elementwise |actual − expected| ≤ atol + rtol·|expected|, with NaN/Inf only where `expected` has them.

    Computed in float64 for float64 outputs and in float32 otherwise: float32 resolves errors far
    below every lower-precision tolerance, at half the memory traffic.
    """
    if (within_tolerance := _within(actual, expected, atol, rtol)) is not None:
        (max_abs, max_rel), mismatched, first_mismatches, error_grid = within_tolerance, 0, (), ()
    else:
        max_abs, max_rel, mismatched, first_mismatches, error_grid = _described(actual, expected, atol, rtol)
    return OutputCheck(
        index=index,
        shape=tuple(actual.shape),
        dtype=str(actual.dtype).removeprefix("torch."),
        max_abs_err=_finite(max_abs),
        max_rel_err=_finite(max_rel),
        atol=atol,
        rtol=rtol,
        mismatched=mismatched,
        numel=actual.numel(),
        first_mismatches=first_mismatches,
        error_grid=error_grid,
    )


def _described(actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> tuple:
    """A wrong answer in full: its errors, how many elements are off, the first of them and where they lie."""
    compute = _compute_dtype(actual)
    expected = expected.to(compute)
    got = actual.to(compute)
    diff = (got - expected).abs_()
    if not bool(diff.isfinite().all()):
        same = (got.isnan() & expected.isnan()) | ((got == expected) & got.isinf())
        diff = diff.nan_to_num_(float("inf"), float("inf")).masked_fill_(same, 0.0)
    scratch = expected.abs().nan_to_num_(0.0)  # one buffer for the bound, then the relative error: outputs
    bad = diff > scratch.mul_(rtol).add_(atol)  # can be gigabytes
    mismatched = int(bad.sum())
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scratch = torch.abs(expected, out=scratch).nan_to_num_(0.0).clamp_min_(1e-12)
    max_rel = float(torch.div(diff, scratch, out=scratch).max()) if diff.numel() else 0.0
    del scratch
    positions = _first_positions(bad, FIRST_MISMATCHES) if mismatched else []
    first = tuple(Mismatch(pos, float(expected[pos]), float(got[pos])) for pos in positions)
    return max_abs, max_rel, mismatched, first, _error_grid(diff.clamp_max_(1e30)) if mismatched else ()


def _compute_dtype(actual: torch.Tensor) -> torch.dtype:
    return torch.float64 if actual.dtype == torch.float64 else torch.float32


def _within(actual: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float) -> tuple[float, float] | None:
    """(max abs error, max rel error) where every element is finite and within atol + rtol·|expected|, else
    None: one pass, slice by slice, for the answers that are right (a wrong one is then described in full).
    `actual` may be a 0-dim tensor: every element held to one value."""
    compute = _compute_dtype(actual)
    max_abs = max_rel = 0.0
    for got, want in aligned_slices(actual, expected):
        if not want.numel():
            continue
        got, want = got.to(compute), want.to(compute)
        diff = torch.sub(got, want).abs_()
        magnitude = want.abs()
        if not float(torch.sub(diff, magnitude, alpha=rtol).max()) <= atol:  # NaN compares false
            return None
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(diff.div_(magnitude.clamp_min_(1e-12)).max()))
    return max_abs, max_rel


def structural_problem(actual: list[SharedOutput | None], reference: Reference) -> str | None:
    """A count, shape, dtype or memory layout that differs from the reference: wrong before any value is read."""
    if len(actual) != len(reference.outputs):
        return f"forward returned {len(actual)} outputs, the reference {len(reference.outputs)}"
    for i, (out, spec) in enumerate(zip(actual, reference.outputs)):
        if out is None:
            continue
        if tuple(out.shape) != spec.shape:
            return f"output {i} has shape {tuple(out.shape)}, the reference {spec.shape}"
        if out.dtype != str(spec.dtype).removeprefix("torch."):
            return f"output {i} has dtype {out.dtype}, the reference {spec.dtype}"
        if problem := stride_problem(i, out.stride, spec):
            return problem
    return None


def stride_problem(i: int, stride: Sequence[int], spec: OutputSpec) -> str | None:
    """Output `i` laid out otherwise than the reference's (where that is dense), in a trial or a timed run alike."""
    if spec.dense and layout(spec.shape, stride) != layout(spec.shape, spec.stride):
        return f"output {i} has strides {tuple(stride)}, the reference {spec.stride}"
    return None


def layout(shape: Sequence[int], stride: Sequence[int]) -> tuple[int, ...]:
    """Strides of the dimensions that have them: code after forward may `view` the output as eager laid it
    out (torch.compile matches eager's strides for the same reason)."""
    return tuple(st for size, st in zip(shape, stride) if size > 1)


def check_outputs(actual: list[torch.Tensor | None], answer: Answer) -> list[OutputCheck]:
    checks = []
    for i, out in enumerate(actual):
        if out is None:
            continue
        spec = answer.reference.outputs[i]
        checks.append(compare_output(i, out, answer.expected[i], calibrated_atol(spec, spec.atol), spec.rtol))
    return checks


def looks_downcast(checks: list[OutputCheck]) -> bool:
    """Wrong at the task's tolerance but within fp16's: the signature of a silent downcast (hack 9)."""
    atol, rtol = HALF_PRECISION_TOL
    failing = [c for c in checks if not c.ok]
    return bool(failing) and all(c.max_abs_err <= atol or c.max_rel_err <= rtol for c in failing)


def _allocation_mark(dtype: torch.dtype) -> float:
    """The value a float reads as when its bytes are all 0xFE (glibc's perturbed fresh block, CPU)."""
    return float(torch.full((torch.finfo(dtype).bits // 8,), 0xFE, dtype=torch.uint8).view(dtype)[0])


def is_unwritten(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Marked memory where the reference has a value: an output that was never written.

    Free GPU memory is NaN-filled before each call; fresh CPU heap blocks arrive as 0xFE bytes.
    """
    if not actual.is_floating_point():
        return False
    marked = actual.isnan() | (actual == _allocation_mark(actual.dtype))
    return bool((marked & ~expected.isnan()).any())


def judging_tolerances(answer: Answer, tol: float | None) -> list[tuple[float, float, bool]]:
    """Each output's (atol, rtol, narrowed): its dtype's tolerance, or, where a constant would pass that (the
    output is small or barely varies: KernelBench's FrobeniusNorm, a sum of sigmoids), an absolute one of a
    `DISCRIMINATION`th of what the best constant misses by (half the output's range). Such a task is judged,
    not refused, and a constant answer fails it (hack 2)."""
    tolerances = []
    for out, spec in zip(answer.expected, answer.reference.outputs):
        atol, rtol = tolerance(spec.dtype, tol)
        if out.is_floating_point() and out.numel() > 1:  # one value (a loss) is judged across seeds only
            low, high = float(out.min()), float(out.max())
            midrange = torch.tensor((low + high) / 2, dtype=out.dtype, device=out.device)  # nearest every element
            if _within(midrange, out, atol, rtol) is not None:
                tolerances.append(((high - low) / 2 / DISCRIMINATION, 0.0, True))
                continue
        tolerances.append((atol, rtol, False))
    return tolerances


def judged_at(answer: Answer, tolerances: list[tuple[float, float, bool]]) -> Answer:
    """`answer` with each output's judging tolerance."""
    specs = [replace(spec, atol=atol, rtol=rtol, narrowed=narrowed)
             for spec, (atol, rtol, narrowed) in zip(answer.reference.outputs, tolerances)]
    return replace(answer, reference=replace(answer.reference, outputs=specs))


def degenerate_reason(answers: list[Answer]) -> str | None:
    """Why a task cannot tell a right answer from a trivial one at its judging tolerances, or None.

    An output with one value passes for a constant guess (hack 2); outputs that do not change with the
    inputs pass for an answer computed once (hack 14).
    """
    first = answers[0]
    for i, spec in enumerate(first.reference.outputs):
        if spec.narrowed and not spec.atol > 0:
            return f"output {i} is constant"
        if spec.narrowed and calibrated_atol(spec, spec.atol) > spec.atol * DISCRIMINATION / 2:
            return (f"output {i} barely varies (by {spec.atol * DISCRIMINATION:.3g} around a constant), and eager's "
                    f"own error ({spec.eager_max_err:.3g}) is as large")
    if len(answers) > 1 and all(
        _same_answer(other.expected[i], out, first.reference.outputs[i])
        for other in answers[1:] for i, out in enumerate(first.expected)
    ):
        return "the reference's outputs do not depend on the inputs (same answer for every seed)"
    return None


def _same_answer(a: torch.Tensor, b: torch.Tensor, spec: OutputSpec) -> bool:
    """Within tolerance for floating outputs; equal for integer and bool ones (argmax, comparisons)."""
    if a.shape != b.shape:
        return False
    if not b.is_floating_point():
        return torch.equal(a, b)
    return _within(a, b, spec.atol, spec.rtol) is not None


@dataclass(frozen=True)
class CallCheck:
    """One observed call held to its seed's reference, as soon as it arrived: its outputs are dropped then."""

    problem: str | None
    """Wrong before any value is read: count, shape, dtype, layout, device, a plain value for a tensor."""
    checks: list[OutputCheck]
    complete: bool
    """Every output is a plain tensor (a subclass is never read)."""
    unwritten: bool
    downcast: bool
    fingerprint: bytes | None
    """A digest of the outputs' bytes: the same answer for other inputs is a cached one."""

    @property
    def passed(self) -> bool:
        return self.problem is None and self.complete and all(c.ok for c in self.checks)


def check_call(call: Observed, answer: Answer, device: str,
               copy: Callable[[SharedOutput], torch.Tensor]) -> CallCheck:
    """`call`'s outputs held to `answer`: their layouts first, then the values of the judge's own `copy` of each."""
    problem = structural_problem(call.outputs, answer.reference)
    if problem is None and call.plain_values:
        problem = f"forward returned {', '.join(call.plain_values)} where the reference returns tensors"
    if problem is None and any(d != device for d in call.devices):
        problem = f"outputs are on {', '.join(sorted(set(call.devices)))}, not {device}"
    overlapping = [i for i in call.non_dense if i < len(answer.reference.outputs) and answer.reference.outputs[i].dense]
    if problem is None and overlapping:
        problem = f"outputs {overlapping} have overlapping strides (not dense) where the reference's are dense"
    if problem is None:
        try:
            outputs = [copy(shared) if shared is not None else None for shared in call.outputs]
        except (OSError, ValueError, RuntimeError) as error:  # RuntimeError: CUDA's, for a handle it will not open
            problem = f"its outputs could not be read: {error}"[:400]
    if problem:
        return CallCheck(problem, [], False, False, False, None)
    checks = check_outputs(outputs, answer)
    complete = None not in outputs
    wrong = not (complete and all(c.ok for c in checks))
    return CallCheck(
        problem=None,
        checks=checks,
        complete=complete,
        unwritten=wrong and any(out is not None and is_unwritten(out, answer.expected[i])
                                for i, out in enumerate(outputs)),
        downcast=wrong and answer.reference.outputs[0].dtype in (torch.float32, torch.float64)
        and looks_downcast(checks),
        fingerprint=fingerprint(outputs, call.outputs) if complete else None,
    )


FINGERPRINT_CHUNK = 1 << 22


def fingerprint(outputs: list[torch.Tensor], shared: list[SharedOutput | None]) -> bytes:
    """A digest of the outputs' bytes: a file's SHA-256, checked as the keeper read it (CPU), else computed
    where the outputs lie: two weighted sums of their words per chunk (equal bytes give equal sums; a few
    gigabytes never travel to the host to be hashed)."""
    digest = hashlib.sha256()
    for out, where in zip(outputs, shared):
        digest.update(repr((tuple(out.shape), out.dtype)).encode())
        if where is not None and where.digest:
            digest.update(bytes.fromhex(where.digest))
            continue
        raw = out.contiguous().reshape(-1).view(torch.uint8)
        words = raw.view(torch.int32) if raw.numel() % 4 == 0 else raw
        weights = torch.arange(min(words.numel(), FINGERPRINT_CHUNK), device=out.device, dtype=torch.float64)
        weights = weights.remainder_(65521).add_(1)
        sums = []
        for chunk in words.split(FINGERPRINT_CHUNK):
            values = chunk.double()
            sums.append(torch.stack([values.sum(), values.mul_(weights[:values.numel()]).sum()]))
        if sums:
            digest.update(torch.cat(sums).cpu().numpy().tobytes())
    return digest.digest()
