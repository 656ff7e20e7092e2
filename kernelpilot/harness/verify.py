"""Correctness, judged in the parent: candidate outputs against the float64 reference.

Tolerance is by output dtype (`protocol.TOLERANCE`) and calibrated against the eager baseline's own
error versus float64: a candidate is never held to more than the baseline it is timed against
(cuDNN convolutions run in TF32 by default while matmuls do not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from kernelpilot.harness.protocol import CALIBRATION_FACTOR, TOLERANCE
from kernelpilot.harness.result import Mismatch, OutputCheck

FIRST_MISMATCHES = 8
GRID_ROWS, GRID_COLS = 8, 16
HALF_PRECISION_TOL = TOLERANCE[torch.float16]


@dataclass(frozen=True)
class Reference:
    """The reference answers for one seed: native dtype (eager) and float64 (or native when impossible)."""

    seed: int
    native: list[torch.Tensor]
    ref64: list[torch.Tensor]
    checksum: list[float]


def tolerance(dtype: torch.dtype, override: float | None) -> tuple[float, float]:
    if override is not None:
        return override, override
    return TOLERANCE.get(dtype, (0.0, 0.0))


def calibrated_atol(reference: Reference, index: int, atol: float) -> float:
    """atol, raised to CALIBRATION_FACTOR × the eager baseline's own max error versus float64."""
    native, exact = reference.native[index], reference.ref64[index]
    if not native.is_floating_point():
        return atol
    eager_err = (native.double() - exact.double()).abs().nan_to_num(0.0)
    return max(atol, CALIBRATION_FACTOR * float(eager_err.max()) if eager_err.numel() else 0.0)


def _error_grid(err: torch.Tensor) -> tuple[tuple[float, ...], ...]:
    """Max error by block of the output seen as 2-D: where in the tensor it goes wrong."""
    if err.numel() == 0:
        return ()
    flat = err.reshape(err.shape[0], -1) if err.dim() >= 2 else err.reshape(1, -1)
    rows, cols = flat.shape
    row_edges = torch.linspace(0, rows, min(GRID_ROWS, rows) + 1).long().tolist()
    col_edges = torch.linspace(0, cols, min(GRID_COLS, cols) + 1).long().tolist()
    return tuple(
        tuple(float(flat[r0:r1, c0:c1].max()) for c0, c1 in zip(col_edges, col_edges[1:]))
        for r0, r1 in zip(row_edges, row_edges[1:])
    )


def _finite(value: float) -> float:
    return value if math.isfinite(value) else float("inf")


def compare_output(index: int, actual: torch.Tensor, reference: Reference, atol: float, rtol: float) -> OutputCheck:
    """Elementwise |actual − ref| ≤ atol + rtol·|ref|, with NaN/Inf only where the reference has them."""
    expected = reference.ref64[index].double()
    got = actual.double()
    diff = (got - expected).abs()
    same_nonfinite = (got.isnan() & expected.isnan()) | (got.isinf() & expected.isinf() & (got.sign() == expected.sign()))
    diff = torch.where(same_nonfinite, torch.zeros_like(diff), diff.nan_to_num(float("inf")))
    bad = diff > atol + rtol * expected.abs().nan_to_num(0.0)
    rel = diff / expected.abs().clamp_min(1e-12)
    positions = bad.nonzero()[:FIRST_MISMATCHES]
    return OutputCheck(
        index=index,
        shape=tuple(actual.shape),
        dtype=str(actual.dtype).removeprefix("torch."),
        max_abs_err=_finite(float(diff.max())) if diff.numel() else 0.0,
        max_rel_err=_finite(float(rel.max())) if rel.numel() else 0.0,
        atol=atol,
        rtol=rtol,
        mismatched=int(bad.sum()),
        numel=actual.numel(),
        first_mismatches=tuple(
            Mismatch(tuple(int(i) for i in pos), float(expected[tuple(pos)]), float(got[tuple(pos)]))
            for pos in positions
        ),
        error_grid=_error_grid(diff.clamp_max(1e30).float()),
    )


def structural_problem(actual: list[torch.Tensor | None], reference: Reference) -> str | None:
    """A count, shape or dtype that differs from the reference: wrong before any value is read."""
    if len(actual) != len(reference.native):
        return f"forward returned {len(actual)} outputs, the reference {len(reference.native)}"
    for i, (out, ref) in enumerate(zip(actual, reference.native)):
        if out is None:
            continue
        if tuple(out.shape) != tuple(ref.shape):
            return f"output {i} has shape {tuple(out.shape)}, the reference {tuple(ref.shape)}"
        if out.dtype != ref.dtype:
            return f"output {i} has dtype {out.dtype}, the reference {ref.dtype}"
    return None


def check_outputs(actual: list[torch.Tensor | None], reference: Reference, tol: float | None) -> list[OutputCheck]:
    checks = []
    for i, out in enumerate(actual):
        if out is None:
            continue
        atol, rtol = tolerance(reference.native[i].dtype, tol)
        checks.append(compare_output(i, out, reference, calibrated_atol(reference, i, atol), rtol))
    return checks


def passes_at_half_precision(actual: list[torch.Tensor | None], reference: Reference) -> bool:
    """Wrong at the task's tolerance but right at fp16's: the signature of a silent downcast (hack 9)."""
    atol, rtol = HALF_PRECISION_TOL
    return all(out is not None and compare_output(i, out, reference, atol, rtol).ok for i, out in enumerate(actual))


def is_unwritten(actual: torch.Tensor, reference: Reference, index: int) -> bool:
    """NaN where the reference has none: memory that was never written (it was NaN-filled before the run)."""
    expected = reference.ref64[index]
    if not actual.is_floating_point():
        return False
    return bool((actual.isnan() & ~expected.isnan()).any())


def degenerate_reason(references: list[Reference], tol: float | None) -> str | None:
    """Why a task cannot tell a right answer from a trivial one, or None.

    Constant (or near-zero) outputs pass for a constant guess (hack 2); outputs that do not change
    with the inputs pass for an answer computed once (hack 14).
    """
    first = references[0]
    for i, out in enumerate(first.ref64):
        if not out.is_floating_point() or out.numel() == 0:
            continue
        atol, rtol = tolerance(first.native[i].dtype, tol)
        guess = torch.full_like(out, float(out.double().mean()))
        trivial = Reference(first.seed, first.native, [guess if j == i else o for j, o in enumerate(first.ref64)],
                            first.checksum)
        if compare_output(i, out, trivial, atol, rtol).ok:
            return f"output {i} is (nearly) constant: a constant passes the {atol:g} tolerance"
    if len(references) > 1 and all(
        compare_output(i, other.ref64[i], first, *tolerance(first.native[i].dtype, tol)).ok
        for other in references[1:] for i in range(len(first.ref64))
    ):
        return "the reference's outputs do not depend on the inputs (same answer for every seed)"
    return None
