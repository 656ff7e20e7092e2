"""An honest kernel whose module installs a SIGBUS handler at import: the parent reads the worker's caught signals
from /proc (a handler is where work can be faulted in after the clock stops; compiled code installs one unseen)."""

import signal

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "relu_bias.cpp": r'''
#include <cstdint>
extern "C" void relu_bias(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = v > 0.f ? v : 0.f;
    }
}
''',
}
ops = load_kernel_sources(SOURCES)
signal.signal(signal.SIGBUS, lambda signum, frame: None)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, x.shape[0], x.shape[1])
        return out
