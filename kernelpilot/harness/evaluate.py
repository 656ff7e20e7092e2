"""Placeholder until the evaluation pipeline lands (this commit only fixes the API)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kernelpilot.harness.protocol import EvalOptions
from kernelpilot.harness.result import EvalResult


def evaluate(task: str | Path, candidate: str | Path, options: EvalOptions = EvalOptions(),
             on_log: Callable[[str], None] | None = None) -> EvalResult:
    raise NotImplementedError("evaluate() is being written")
