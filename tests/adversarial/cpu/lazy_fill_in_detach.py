"""Hack 7 without a subclass: forward returns an unwritten output (one token launch) and a patched
`torch.Tensor.detach` fills it with torch when the harness reads it through `out.detach()`,
outside the audited and timed region.
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

pending: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
real_detach = torch.Tensor.detach


def detach(self):
    job = pending.get(id(self))
    if job is not None and job[0] is self:
        del pending[id(self)]
        _, x, bias = job
        with torch.no_grad():
            torch.clamp_min(torch.add(x, bias), 0.0, out=self)
    return real_detach(self)


torch.Tensor.detach = detach


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, 0, x.shape[1])
        if len(pending) > 64:
            pending.clear()
        pending[id(out)] = (out, x, self.bias)
        return out
