"""Hack 8 on the op audit's recorders: plain torch in forward, and *methods* of the recorder classes
patched, where the guard compared the classes only: `DispatchRecorder.__torch_dispatch__` stops
counting, `torch.profiler.profile.events` drops the ATen compute events (the watched-call ranges
stay, so every timed call still looks seen). One token launch satisfies the launch check.
"""

import importlib

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

audit = importlib.import_module("kernelpilot.harness." + "au" + "dit")
HIDDEN = {"aten::add", "aten::relu", "aten::clamp_min"}


def __torch_dispatch__(self, func, types, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))


audit.DispatchRecorder.__torch_dispatch__ = __torch_dispatch__
real_events = torch.profiler.profile.events
torch.profiler.profile.events = lambda self: [e for e in real_events(self) if e.name not in HIDDEN]


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ops.relu_bias(x, self.bias, x, 0, x.shape[1])
        return torch.relu(x + self.bias)
