"""Right values in the wrong layout: the answer is written column-major and returned as a transposed view.

Code after forward that `view`s the output as eager laid it out would read it scrambled.
"""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "relu_bias_scale_t.cpp": r'''
#include <cstdint>
extern "C" void relu_bias_scale_t(const float* x, const float* bias, float* out_t, int64_t rows, int64_t cols,
                                  float scale) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out_t[c * rows + r] = (v > 0.f ? v : 0.f) * scale;
    }
}
''',
}
ops = load_kernel_sources(SOURCES)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out_t = torch.empty(x.shape[1], x.shape[0])
        ops.relu_bias_scale_t(x, self.bias, out_t, x.shape[0], x.shape[1], self.scale)
        return out_t.t()
