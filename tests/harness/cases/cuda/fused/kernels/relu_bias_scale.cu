#include <cstdint>
#include <cuda_runtime.h>

// out[r, c] = max(x[r, c] + bias[c], 0) * scale over rows x cols floats, one pass (eager makes three).
__global__ void relu_bias_scale_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                       float* __restrict__ out, int64_t n, int64_t cols, float scale) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = x[i] + bias[i % cols];
    out[i] = (v > 0.f ? v : 0.f) * scale;
  }
}

extern "C" int relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                               float scale, cudaStream_t stream) {
  int64_t n = rows * cols;
  int threads = 256;
  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  relu_bias_scale_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x, bias, out, n, cols, scale);
  return (int)cudaGetLastError();
}
