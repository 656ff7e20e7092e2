"""Hack 10 by proxy, quieter: PyTorch in a child process fed through pipes, no thread, no numpy.

A plain child process started at import reads raw float bytes from its stdin and writes back
relu(x + bias) computed with PyTorch. Forward copies the input out and the answer in with ctypes
(no ATen op, no numpy) and runs its own kernel on zero elements so that "a kernel ran".
"""

import ctypes
import subprocess
import sys

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "relu_bias.cpp": r'''
#include <cstdint>
extern "C" void relu_bias(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = v > 0.f ? v : 0.f;
    }
}
''',
}
ops = load_kernel_sources(SOURCES)

CHILD = r"""
import sys, torch
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    header = inp.read(16)
    if len(header) < 16:
        break
    n, cols = int.from_bytes(header[:8], "little"), int.from_bytes(header[8:], "little")
    x = torch.frombuffer(bytearray(inp.read(4 * n)), dtype=torch.float32)
    bias = torch.frombuffer(bytearray(inp.read(4 * cols)), dtype=torch.float32)
    out.write(torch.relu(x.view(-1, cols) + bias).numpy().tobytes())
    out.flush()
"""
child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, 0, 0)
        n, cols = x.numel(), self.bias.numel()
        child.stdin.write(n.to_bytes(8, "little") + cols.to_bytes(8, "little"))
        child.stdin.write(ctypes.string_at(x.data_ptr(), 4 * n))
        child.stdin.write(ctypes.string_at(self.bias.data_ptr(), 4 * cols))
        child.stdin.flush()
        answer = child.stdout.read(4 * n)
        ctypes.memmove(out.data_ptr(), answer, 4 * n)
        return out
