#include <cstdint>

// Writes to an unmapped address: the candidate's process dies with SIGSEGV.
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
  volatile float* unmapped = reinterpret_cast<volatile float*>(static_cast<uintptr_t>(16 + rows % 2));
  *unmapped = scale;
}
