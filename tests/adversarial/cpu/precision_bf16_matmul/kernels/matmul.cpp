#include <cstdint>
#include <cstring>

// bf16: keep the top 16 bits of each fp32 operand (round to nearest even), accumulate in fp32.
static inline float to_bf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

extern "C" void matmul_bf16(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
#pragma omp parallel for
  for (int64_t i = 0; i < m; ++i) {
    float* row = out + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = 0.f;
    for (int64_t p = 0; p < k; ++p) {
      const float a = to_bf16(x[i * k + p]);
      const float* wp = w + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += a * to_bf16(wp[j]);
    }
  }
}
