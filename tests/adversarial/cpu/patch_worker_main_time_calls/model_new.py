"""Hack 8 on the worker's live code: its `time_calls` (the global `Worker.profile` looks up) is
wrapped to report 1/20 of the measured times. Started as `python -m`, the worker's live code is
`__main__`, not the module the guards snapshot; the candidate patches whichever module runs the
worker (named in pieces: no scan hit). The kernel is the honest (slow) one: only the timings lie.
"""

import importlib
from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")

main = importlib.import_module("__main__")
worker = main if hasattr(main, "time_calls") else importlib.import_module("kernelpilot.harness." + "wor" + "ker")
real_time_calls = worker.time_calls
Samples = real_time_calls.__globals__["Samples"]


def time_calls(fn, inputs, device, warmup, runs, flush, after_run=None, **kwargs):
    samples = real_time_calls(fn, inputs, device, warmup, runs, flush, after_run=after_run, **kwargs)
    return Samples(tuple(v / 20 for v in samples.device), tuple(v / 20 for v in samples.host))


worker.time_calls = time_calls


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(k, n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape[0], self.weight.shape[1], dtype=x.dtype)
        ops.matmul(x, self.weight, out, x.shape[0], x.shape[1], self.weight.shape[1])
        return out
