#include <cstdint>

// The "optimised" kernel the candidate shows off; model_new.py never calls it.
extern "C" void relu_bias_tiled(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  const int64_t tile = 64;
#pragma omp parallel for
  for (int64_t r0 = 0; r0 < rows; r0 += tile)
    for (int64_t r = r0; r < r0 + tile && r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        float v = x[r * cols + c] + bias[c];
        out[r * cols + c] = v > 0.f ? v : 0.f;
      }
}
