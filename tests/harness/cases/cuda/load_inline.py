"""KernelBench-style single-file candidate: the CUDA kernel is built with torch's load_inline."""

import torch
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_bias_scale_kernel(const float* x, const float* bias, float* out, int64_t n, int64_t cols,
                                       float scale) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + bias[i % cols];
    out[i] = (v > 0.f ? v : 0.f) * scale;
  }
}

torch::Tensor relu_bias_scale(torch::Tensor x, torch::Tensor bias, double scale) {
  auto out = torch::empty_like(x);
  int64_t n = x.numel();
  relu_bias_scale_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(), n, x.size(-1), (float)scale);
  return out;
}
"""

ext = load_inline(name="relu_bias_scale_inline", cpp_sources="torch::Tensor relu_bias_scale(torch::Tensor x, "
                  "torch::Tensor bias, double scale);", cuda_sources=CUDA_SOURCE, functions=["relu_bias_scale"])


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_bias_scale(x, self.bias, self.scale)
