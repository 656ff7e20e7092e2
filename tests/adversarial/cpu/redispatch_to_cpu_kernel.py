"""Hack 10 below the audit: ATen ops called through `OpOverload.redispatch` with the CPU key alone.

Redispatching jumps straight to the CPU kernel: the Python dispatch key (the dispatch mode) is
skipped and no RecordFunction runs, so the profiler records nothing either. The own kernel runs on
zero rows so that "a kernel ran".
"""

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

CPU_ONLY = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
ADD = torch.ops.aten.add.Tensor
CLAMP_MIN = torch.ops.aten.clamp_min.default


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, 0, x.shape[1])
        return CLAMP_MIN.redispatch(CPU_ONLY, ADD.redispatch(CPU_ONLY, x, self.bias), 0.0)
