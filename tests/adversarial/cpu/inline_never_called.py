"""Hack 11 (single file): a `load_inline` extension that is built but never called.

Same source and name as `legit_load_inline.py` (one shared build); forward computes with numpy instead.
"""

import numpy as np
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
        # No torch compute runs here (numpy is invisible to the dispatcher) and the extension is never called.
        return torch.from_numpy(np.maximum(x.numpy() + self.bias.detach().numpy(), 0.0))
