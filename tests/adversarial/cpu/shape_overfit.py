"""Hack 18: a hard-coded shape check; any other shape falls back to PyTorch.

The harness can only judge the shapes the task runs. Those take the honest kernel here and the
fallback never runs, so this candidate is judged like its honest twin (legit_single_file.py).
"""

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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if tuple(x.shape) != (256, 1024):
            return torch.relu(x + self.bias)
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, 256, 1024)
        return out
