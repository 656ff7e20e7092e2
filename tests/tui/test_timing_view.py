"""The timing view's Nsight Compute table: counters per kernel, or the reason there are none."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console

from kernelpilot.harness.ncu import parse
from kernelpilot.harness.result import EvalResult
from kernelpilot.tui.widgets.timing import report

CAPTURE = Path(__file__).parents[1] / "harness" / "data" / "ncu_h200_relu_bias_scale.csv"


def shown(result: EvalResult) -> str:
    console = Console(width=120, record=True, file=open(os.devnull, "w"))
    console.print(report(result))
    return console.export_text()


def test_ncu_counters_are_shown_per_kernel():
    result = EvalResult(task="t.py", candidate="c", device="cuda", built=True, correct=True, reward=3,
                        times_ms={"eager": 0.08, "compile": 0.06, "candidate": 0.02},
                        ncu=parse(CAPTURE.read_text()), protocol={"ncu": "ok"})
    text = shown(result)
    row = next(line for line in text.splitlines() if "relu_bias_scale_kernel" in line)
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells == ["relu_bias_scale_kernel", "16.4", "2809", "58.5", "21.8", "76.6%", "100.0%"]


def test_the_reason_is_shown_when_ncu_did_not_run():
    result = EvalResult(task="t.py", candidate="c", device="cuda", built=True,
                        protocol={"ncu": "not run: ncu is not on PATH (install Nsight Compute for bandwidth and occupancy)"})
    assert "ncu: not run: ncu is not on PATH" in shown(result)
    assert "counters are read on CUDA only" in shown(EvalResult(task="t.py", candidate="c", device="cpu"))
