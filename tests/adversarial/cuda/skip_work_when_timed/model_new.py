"""Timing-only hack on CUDA: the timing loop is spotted on the call stack and its calls skip the work."""

import traceback

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(k, n))
        self.last = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        timed = any(frame.name == "time_calls" for frame in traceback.extract_stack())
        if timed and self.last is not None:
            return self.last
        out = torch.empty(x.shape[0], self.weight.shape[1], dtype=x.dtype, device=x.device)
        ops.matmul(x, self.weight, out, x.shape[0], x.shape[1], self.weight.shape[1])
        self.last = out
        return out
