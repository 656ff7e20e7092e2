"""Hack 16: each call returns a fresh tensor and fills the one the previous call returned."""

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


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.pending = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pending is not None:
            px, pout = self.pending
            ops.relu_bias(px, self.bias, pout, px.shape[0], px.shape[1])
        out = torch.empty_like(x)
        self.pending = (x, out)
        return out
