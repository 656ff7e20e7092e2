#include <cstdint>

// out[r, c] = max(x[r, c] + bias[c], 0) * scale: one pass instead of eager's three.
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* outr = out + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) {
      float v = xr[c] + bias[c]  // missing semicolon
      outr[c] = (v > 0.f ? v : 0.f) * scale;
    }
  }
}
