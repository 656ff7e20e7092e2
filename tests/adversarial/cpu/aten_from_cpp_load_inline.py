"""Hack 10: ATen called from C++ inside a `load_inline` extension (`torch::relu(x + bias)`)."""

import torch
from torch.utils.cpp_extension import load_inline

CPP = r'''
#include <torch/extension.h>
torch::Tensor relu_bias(torch::Tensor x, torch::Tensor bias) {
  return torch::relu(x + bias);
}
'''

ext = load_inline(name="adv_relu_bias_aten", cpp_sources=[CPP], functions=["relu_bias"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_bias(x, self.bias)
