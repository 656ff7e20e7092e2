"""The same protocol on the CUDA backend (run on the GPU machine; skipped without CUDA)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelpilot.harness import EvalOptions, evaluate

CASES = Path(__file__).parent / "cases"
TASK = CASES / "relu_scale.py"
CUDA = EvalOptions(device="cuda")

pytestmark = pytest.mark.gpu


def test_fused_cuda_kernel_is_correct_and_faster_than_eager():
    result = evaluate(TASK, CASES / "cuda" / "fused", CUDA)
    assert result.correct and not result.violations, (result.error, result.violations)
    assert result.reward >= 2, result.times_ms
    assert any("relu_bias_scale_kernel" in k.name for k in result.kernels)
    assert result.protocol["precision"]["cuda.matmul.allow_tf32"] is False


def test_wrong_cuda_kernel_gets_minus_one_and_no_ncu_run():
    result = evaluate(TASK, CASES / "cuda" / "wrong", EvalOptions(device="cuda", ncu=True))
    assert result.built and not result.correct and result.reward == -1
    assert result.protocol["ncu"].startswith("not run") and not result.ncu


def test_cuda_compile_error_names_file_and_line():
    result = evaluate(TASK, CASES / "cuda" / "broken", CUDA)
    assert not result.built and result.reward == -1
    assert "kernels/relu_bias_scale.cu(11): error" in result.error


def test_kernelbench_load_inline_candidate():
    result = evaluate(TASK, CASES / "cuda" / "load_inline.py", CUDA)
    assert result.correct and not result.violations, (result.error, result.violations)
    assert result.reward >= 1


@pytest.mark.skipif(shutil.which("ncu") is None, reason="Nsight Compute (ncu) not on PATH")
def test_ncu_counters_for_a_passing_candidate():
    result = evaluate(TASK, CASES / "cuda" / "fused", EvalOptions(device="cuda", ncu=True))
    assert result.passed, (result.error, result.violations)
    assert result.protocol["ncu"] == "ok", result.protocol["ncu"]
    kernel = next(k for k in result.ncu if "relu_bias_scale_kernel" in k.name)
    assert kernel.launches == 1 and kernel.duration_us > 1
    assert 0 < kernel.achieved_occupancy_pct <= 100 and 0 < kernel.theoretical_occupancy_pct <= 100
    assert kernel.dram_gb_per_s > 100 and 0 < kernel.dram_pct_of_peak <= 100  # it streams 64 MB
