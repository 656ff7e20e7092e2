"""Forged verdict input: the candidate sends the parent its own "timing" message.

The worker's channel object lives in the candidate's process; found through the garbage collector
(names in pieces, so a source scan misses it), it sends a timing of 1 µs a run during the re-check
after timing, which comes after the real timing message and in the phase that may send one. The
kernel is the honest (slow) one: only the reported times lie.
"""

import gc
import traceback
from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


def _channel():
    return next(o for o in getattr(gc, "get_" + "objects")()
                if type(o).__name__ == "WorkerChannel" and hasattr(o, "send"))


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(k, n))
        self.timed = False
        self.forged = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        stack = [frame.name for frame in traceback.extract_stack()]
        if "time_calls" in stack:
            self.timed = True
        elif self.timed and not self.forged:
            self.forged = True
            fake = [0.001] * 30
            _channel().send("timing", candidate={"device": fake, "host": fake})
        out = torch.empty(x.shape[0], self.weight.shape[1], dtype=x.dtype)
        ops.matmul(x, self.weight, out, x.shape[0], x.shape[1], self.weight.shape[1])
        return out
