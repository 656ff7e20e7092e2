"""Probe: at import, SIGSTOP every process it can see that is not its own: the judge's reference keeper (the
trusted process that holds the reference and compares the answers), the judge, anything else.

The kernel itself is honest. Were the keeper in reach, the evaluation would hang until its timeout or end
as a harness error; inside the sandbox's PID namespace it is out of reach, and the evaluation must end as
the honest kernel's would.
"""

import os
import signal

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


def own_line(pid: int) -> bool:
    """This process, or one of its ancestors inside the sandbox (stopping those would stop itself)."""
    ancestor = os.getpid()
    while ancestor > 1:
        if ancestor == pid:
            return True
        with open(f"/proc/{ancestor}/stat") as stat:
            ancestor = int(stat.read().rsplit(")", 1)[1].split()[1])
    return pid == 1


for entry in os.listdir("/proc"):
    if entry.isdigit() and not own_line(int(entry)):
        try:
            os.kill(int(entry), signal.SIGSTOP)
        except OSError:
            pass


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, x.shape[0], x.shape[1])
        return out
