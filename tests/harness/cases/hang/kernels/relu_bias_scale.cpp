#include <cstdint>

// Never returns: the harness must time out, not hang.
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
  volatile int64_t spin = 0;
  while (rows > 0) { spin = spin + 1; }
}
