#include <cstdint>

// out (m x n) = x (m x k) @ w (k x n), fp32 throughout: a plain single-threaded i-k-j loop.
// Honest and several times slower than eager's BLAS, so its honest reward is 1.
extern "C" void matmul(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
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
