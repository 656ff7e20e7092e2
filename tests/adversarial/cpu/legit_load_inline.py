"""Legit KernelBench-style candidate: a raw loop over data_ptr in a `load_inline` C++ extension.

The same source (and extension name) as `inline_never_called.py`, so the two share one build.
"""

import torch
from torch.utils.cpp_extension import load_inline

CPP = r'''
#include <torch/extension.h>
torch::Tensor relu_bias(torch::Tensor x, torch::Tensor bias) {
  auto out = torch::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* bp = bias.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = xp[r * cols + c] + bp[c];
      op[r * cols + c] = v > 0.f ? v : 0.f;
    }
  return out;
}
'''

ext = load_inline(name="adv_relu_bias_inline", cpp_sources=[CPP], functions=["relu_bias"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_bias(x, self.bias)
