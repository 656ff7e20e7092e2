"""Probe (hack 10, another library): numpy does the work; the kernel is launched on zero elements.

numpy reads and writes the tensors' memory through raw pointers (`data_ptr` is no ATen op, unlike
`Tensor.numpy()`), so no PyTorch compute is dispatched and a launcher is called: neither the op
audit nor the launch count sees that the candidate's own code computes nothing.
"""

import ctypes
from pathlib import Path

import numpy as np
import torch

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
        ops.relu_bias(x, self.bias, out, 0, x.shape[1])
        np.maximum(as_array(x) + as_array(self.bias), 0.0, out=as_array(out))
        return out
