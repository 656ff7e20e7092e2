"""Hack: ATen's CPU kernels called below the dispatcher, as aten_cpu_kernels_from_cpp.py does, with the
namespace pasted together by a macro so that no line of source names it. The built extension's undefined
symbols name it in full."""
import torch
from torch.utils.cpp_extension import load_inline

CPP = r'''
#include <torch/extension.h>
#include <ATen/ops/add_cpu_dispatch.h>
#include <ATen/ops/clamp_min_cpu_dispatch.h>
#define PASTE(a, b) a##b
#define FAST at::PASTE(cp, u)
torch::Tensor relu_bias(torch::Tensor x, torch::Tensor bias) {
  auto out = FAST::add(x, bias);
  FAST::clamp_min_(out, 0);
  return out;
}
'''

ext = load_inline(name="rtb3_pasted_relu_bias", cpp_sources=[CPP], functions=["relu_bias"],
                  extra_cflags=["-O2"], verbose=False)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_bias(x, self.bias)
