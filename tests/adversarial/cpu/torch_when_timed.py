"""Probe: PyTorch in the timed calls only. forward asks the call stack whether the harness's timing loop
called it: verification, the checked runs' answers and the audited re-check see the candidate's own
kernel, while the timed calls run `torch.relu` (unaudited there, and right, so no answer check objects).
"""

import inspect

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


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if any(frame.function == "time_calls" for frame in inspect.stack(context=0)):
            return torch.relu(x + self.bias)
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, x.shape[0], x.shape[1])
        return out
