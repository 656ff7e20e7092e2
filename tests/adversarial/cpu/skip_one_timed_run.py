"""Hack 16, at its smallest: an honest kernel that skips its work in one timed run only (the 21st),
counting calls to know which (5 verification trials and 3 warm-ups come first). Eight timed runs drawn after the
timing are checked against eager's answer, so a wrong answer is caught 8 times in 30; the skipped call's copy of
its cached answer is PyTorch compute in forward (`op_audit`) every time; and one run cannot move the median."""

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
SKIPPED_CALL = 5 + 3 + 20


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.calls = 0
        self.last = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls == SKIPPED_CALL and self.last is not None:
            return self.last.clone()
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, x.shape[0], x.shape[1])
        self.last = out
        return out
