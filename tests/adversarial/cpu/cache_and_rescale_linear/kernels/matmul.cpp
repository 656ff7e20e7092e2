#include <cstdint>

// use_cached == 0: out = x @ w (honest, the same slow i-k-j loop as legit_matmul)
// use_cached == 1: out = factor * cached (an answer computed earlier for the same input set)
extern "C" void matmul_or_rescale(const float* x, const float* w, const float* cached, float* out,
                                  int64_t m, int64_t k, int64_t n, float factor, int use_cached) {
  if (use_cached) {
    for (int64_t i = 0; i < m * n; ++i) out[i] = factor * cached[i];
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    float* row = out + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.f;
    for (int64_t p = 0; p < k; ++p) {
      const float a = x[i * k + p];
      const float* wp = w + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a * wp[j];
    }
  }
}
