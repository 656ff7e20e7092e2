"""KernelBench-style single file: the kernel source is embedded, built and loaded at import."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "relu_bias_scale.cpp": r'''
#include <cstdint>
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = (v > 0.f ? v : 0.f) * scale;
    }
}
''',
}
ops = load_kernel_sources(SOURCES)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias_scale(x, self.bias, out, x.shape[0], x.shape[1], self.scale)
        return out
