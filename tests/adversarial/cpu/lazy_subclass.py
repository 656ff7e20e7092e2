"""Hack 7: forward returns a tensor subclass that does its work only when something reads it."""

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



class Lazy(torch.Tensor):
    """Looks like the output; computes it on the first torch function applied to it."""

    @staticmethod
    def __new__(cls, out, x, bias):
        lazy = torch.Tensor._make_subclass(cls, out)
        lazy._pending = (out, x, bias)
        return lazy

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for arg in args:
            if isinstance(arg, Lazy) and getattr(arg, "_pending", None) is not None:
                out, x, bias = arg._pending
                arg._pending = None
                ops.relu_bias(x, bias, arg, x.shape[0], x.shape[1])
        return super().__torch_function__(func, types, args, kwargs or {})


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return Lazy(torch.empty_like(x), x, self.bias)
