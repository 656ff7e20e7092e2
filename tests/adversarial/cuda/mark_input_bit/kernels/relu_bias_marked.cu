#include <cstdint>
#include <cuda_runtime.h>

__global__ void relu_bias_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                 float* __restrict__ out, int64_t n, int64_t cols) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + bias[i % cols];
    out[i] = v > 0.f ? v : 0.f;
  }
}

// After the output is written: the lowest bit of x[0] flipped.
__global__ void mark_kernel(float* x) { reinterpret_cast<uint32_t*>(x)[0] ^= 1u; }

extern "C" int relu_bias_marked(float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                cudaStream_t stream) {
  int64_t n = rows * cols;
  relu_bias_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, bias, out, n, cols);
  mark_kernel<<<1, 1, 0, stream>>>(x);
  return (int)cudaGetLastError();
}
