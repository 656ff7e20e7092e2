#include <cstdint>

// In place: x[r, c] = max(x[r, c] + bias[c], 0).
extern "C" void relu_bias_(float* x, const float* bias, int64_t rows, int64_t cols) {
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      x[r * cols + c] = v > 0.f ? v : 0.f;
    }
}
