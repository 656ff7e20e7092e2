"""Hack 11 (the launch count forged): the kernel is never called; its launch counter is bumped instead.

numpy computes through raw pointers (no ATen op is dispatched) and the documented launcher module's
public `launch_counts` is incremented by hand, so the kernel looks run.
"""

import ctypes
from pathlib import Path

import numpy as np
import torch

from kernelpilot.harness import kernels
from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


def as_array(t: torch.Tensor) -> np.ndarray:
    pointer = ctypes.cast(t.data_ptr(), ctypes.POINTER(ctypes.c_float))
    return np.ctypeslib.as_array(pointer, shape=tuple(t.shape))


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        np.maximum(as_array(x) + as_array(self.bias), 0.0, out=as_array(out))
        kernels.launch_counts["relu_bias"] += 1
        return out
