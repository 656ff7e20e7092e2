"""Hack 10 through torch.compile: the function is compiled in `__init__` (nothing audits it), and
forward calls the Inductor-generated module's `call` found in PyCodeCache, skipping Dynamo. The
generated C++ kernel dispatches no ATen op and its output comes from `empty_strided_cpu`, past the
dispatcher too. The own kernel runs on zero rows so that "a kernel ran".
"""

import torch
import tqdm
from torch._inductor.codecache import PyCodeCache

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

ROWS = 256
tqdm.tqdm.monitor_interval = 0  # the compile would leave tqdm's monitor thread alive


def relu_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(x + bias)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        with torch.no_grad():
            torch.compile(relu_bias, dynamic=False)(torch.randn(ROWS, cols), torch.randn(cols))
        self.generated = [m for m in PyCodeCache.modules if hasattr(m, "call")][-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ops.relu_bias(x, self.bias, torch.empty(0), 0, x.shape[1])
        return self.generated.call([x, self.bias.detach()])[0]
