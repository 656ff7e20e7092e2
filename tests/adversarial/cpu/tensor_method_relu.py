"""Hack 10: the kernel adds the bias, the relu is PyTorch's, called through a tensor method (`out.relu()`)."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "add_bias.cpp": r'''
#include <cstdint>
extern "C" void add_bias(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = v;
    }
}
''',
}
ops = load_kernel_sources(SOURCES)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.add_bias(x, self.bias, out, x.shape[0], x.shape[1])
        return out.relu()
