"""Legit kernel for tiny_outputs: tanh(x)·1e-7, right at the narrowed tolerance a constant fails."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "tiny_tanh.cpp": r'''
#include <cmath>
#include <cstdint>
extern "C" void tiny_tanh(const float* x, float* out, int64_t n) {
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(x[i]) * 1e-7f;
}
''',
}
ops = load_kernel_sources(SOURCES)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.tiny_tanh(x, out, x.numel())
        return out
