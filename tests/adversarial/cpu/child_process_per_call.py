"""Hack 10 by proxy, leaving nothing running: each forward runs a child process and waits for it.

The child (plain Python, started and reaped inside forward) computes relu(x + bias) from raw bytes;
no process outlives the call, so only the CPU time the reaped child used can tell.
"""

import ctypes
import subprocess
import sys

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "touch.cpp": r'''
#include <cstdint>
extern "C" void touch(float* out, int64_t n) { for (int64_t i = 0; i < n; ++i) out[i] = 0.f; }
''',
}
ops = load_kernel_sources(SOURCES)

CHILD = r"""
import array, sys
data = sys.stdin.buffer.read()
cols = int.from_bytes(data[:8], "little")
values = array.array("f"); values.frombytes(data[8:])
x, bias = values[:len(values) - cols], values[len(values) - cols:]
out = array.array("f", (max(v + bias[i % cols], 0.0) for i, v in enumerate(x)))
sys.stdout.buffer.write(out.tobytes())
"""


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.touch(out, 0)
        n, cols = x.numel(), self.bias.numel()
        payload = cols.to_bytes(8, "little") + ctypes.string_at(x.data_ptr(), 4 * n) \
            + ctypes.string_at(self.bias.data_ptr(), 4 * cols)
        answer = subprocess.run([sys.executable, "-S", "-c", CHILD], input=payload, capture_output=True).stdout
        ctypes.memmove(out.data_ptr(), answer, 4 * n)
        return out
