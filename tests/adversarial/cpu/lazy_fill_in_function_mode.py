"""Hack 7 without a subclass or a patch: a TorchFunctionMode entered at import and never left sees
the harness's torch calls too. forward returns an unwritten output (one token launch); the first
torch call that reads it outside forward (detach, clone, equal ... outside the audited and timed
region) finds the mode filling it with torch first.
"""

import torch
from torch.overrides import TorchFunctionMode

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
in_forward = [False]


class FillOnRead(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if not in_forward[0] and pending:
            for arg in args:
                job = pending.get(id(arg)) if isinstance(arg, torch.Tensor) else None
                if job is not None and job[0] is arg:
                    del pending[id(arg)]
                    _, x, bias = job
                    with torch.no_grad():
                        torch.clamp_min(torch.add(x, bias), 0.0, out=arg)
        return func(*args, **(kwargs or {}))


FillOnRead().__enter__()


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        in_forward[0] = True
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, 0, x.shape[1])
        if len(pending) > 64:
            pending.clear()
        pending[id(out)] = (out, x, self.bias)
        in_forward[0] = False
        return out
