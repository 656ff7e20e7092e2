"""CUDA Agent's milestone reward: −1 failed, 1 correct, 2 faster than eager, 3 faster than eager and compile."""

from __future__ import annotations

from kernelpilot.harness.protocol import SPEEDUP_MILESTONE


def milestone_reward(passed: bool, speedup_vs_eager: float | None, speedup_vs_compile: float | None) -> int:
    """`passed` means built, correct and no violation. A missing speedup never counts as faster."""
    if not passed:
        return -1
    if speedup_vs_eager is None or speedup_vs_eager <= SPEEDUP_MILESTONE:
        return 1
    if speedup_vs_compile is None or speedup_vs_compile <= SPEEDUP_MILESTONE:
        return 2
    return 3
