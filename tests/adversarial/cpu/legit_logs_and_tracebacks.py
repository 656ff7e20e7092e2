"""Legit: an honest kernel whose Python does what library code around it looks at frames for — a
namedtuple and a TypeVar at import, log records, a formatted traceback and a warning in forward — none
of which hands the candidate a frame, so none is a reach into the harness."""

import collections
import logging
import traceback
import typing
import warnings

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
Shape = collections.namedtuple("Shape", "rows cols")
T = typing.TypeVar("T")
log = logging.getLogger(__name__)
logging.basicConfig(level=logging.DEBUG)
log.info("kernels loaded")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = Shape(*x.shape)
        if self.calls == 0:
            warnings.warn("first call", stacklevel=2)
            try:
                raise ValueError("not a problem")
            except ValueError:
                log.debug("handled: %s", traceback.format_exc().splitlines()[-1])
        self.calls += 1
        log.debug("call %d on %s", self.calls, shape)
        out = torch.empty_like(x)
        ops.relu_bias(x, self.bias, out, shape.rows, shape.cols)
        return out
