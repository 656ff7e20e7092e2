"""Red team 31: a native thread waits for the GIL as forward returns and, once the harness's main thread
first lets it go (after the timer stopped: a syscall, a torch op in the snapshot), fills the output while
holding it. The main thread cannot read the output before the fill ends; the background-CPU window opens
only after the snapshot, so nothing runs in it."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "relu_bias.cpp": r'''
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
extern "C" {
int PyGILState_Ensure(void);
void PyGILState_Release(int);
}
static void body(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = v > 0.f ? v : 0.f;
    }
}
extern "C" void relu_bias_later(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::microseconds(5));
    int s = PyGILState_Ensure();
    body(x, bias, out, rows, cols);
    PyGILState_Release(s);
  }).detach();
}
''',
}
ops = load_kernel_sources(SOURCES)


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.keep = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        self.keep = self.keep[-8:] + [(x, out)]
        ops.relu_bias_later(x, self.bias, out, x.shape[0], x.shape[1])
        return out
