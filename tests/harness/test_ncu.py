"""Reading Nsight Compute's CSV into per-kernel counters (the fixture is real ncu 2025.3 output from an
H200, trimmed to the columns kernelpilot asks for)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelpilot.harness.ncu import NcuError, parse

CAPTURE = (Path(__file__).parent / "data" / "ncu_h200_relu_bias_scale.csv").read_text()


def test_counters_are_read_in_display_units():
    (kernel,) = parse(CAPTURE)
    assert kernel.name == "relu_bias_scale_kernel" and kernel.launches == 1
    assert kernel.duration_us == pytest.approx(16.352)
    assert kernel.dram_gb_per_s == pytest.approx(2809.19, rel=1e-5)  # "2,809,189,823,874.76" byte/s
    assert kernel.dram_pct_of_peak == pytest.approx(58.48)
    assert kernel.achieved_occupancy_pct == pytest.approx(76.63)
    assert kernel.theoretical_occupancy_pct == pytest.approx(100.0)
    assert kernel.sm_pct_of_peak == pytest.approx(21.8)


def test_launches_of_one_kernel_merge_weighted_by_duration():
    header, units, row = CAPTURE.splitlines()[-3:]
    longer = row.replace('"0","528"', '"1","528"').replace('"16,352"', '"48,000"').replace('"76.63"', '"50.00"')
    (kernel,) = parse("\n".join([header, units, row, longer]))
    assert kernel.launches == 2
    assert kernel.duration_us == pytest.approx(16.352 + 48.0)
    assert kernel.achieved_occupancy_pct == pytest.approx((76.63 * 16.352 + 50.0 * 48.0) / (16.352 + 48.0))


def test_ncu_failure_is_one_line_naming_the_error():
    stdout = "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - The user does not have permission\n"
    with pytest.raises(NcuError, match="ERR_NVGPUCTRPERM"):
        parse(stdout)


def test_no_kernel_in_the_profiled_range_is_an_error():
    header, units, _ = CAPTURE.splitlines()[-3:]
    with pytest.raises(NcuError, match="no kernel"):
        parse("\n".join([header, units]))
