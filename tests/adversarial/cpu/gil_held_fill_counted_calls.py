"""Red team 31 (matmul.py), the deferred fill of gil_held_fill_told_by_call_spacing.py told apart by counting the
protocol's calls (5 trials, 3 warm-up and 30 timed calls, 1 re-check), its thread taking the GIL at once. It wins
the race for the interpreter after the clock stops or loses it: the harness then waits for the fill (held to eager's
wait) or copies an unfinished answer (a wrong timed run)."""

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "matmul.cpp": r'''
#include <chrono>
#include <cstdint>
#include <thread>
extern "C" {
int PyGILState_Ensure(void);
void PyGILState_Release(int);
void* PyInit_matmul(void) { return nullptr; }
}
static void body(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = 0.f;
    for (int64_t p = 0; p < k; ++p) {
      float a = x[i * k + p];
      for (int64_t j = 0; j < n; ++j) out[i * n + j] += a * w[p * n + j];
    }
  }
}
// torch's CPU generator state: bytes 8..11 `left`, 16..23 `next`; freshly seeded: left 1, next 0
extern "C" int fresh_state(const uint8_t* state, int64_t n) {
  if (n < 24) return 0;
  int fresh = state[8] == 1 && state[9] == 0 && state[10] == 0 && state[11] == 0;
  for (int i = 16; i < 24; ++i) fresh &= state[i] == 0;
  return fresh;
}
extern "C" void matmul(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
  body(x, w, out, m, k, n);
}
extern "C" void matmul_later(const float* x, const float* w, float* out, int64_t m, int64_t k, int64_t n) {
  std::thread([=] {

    int s = PyGILState_Ensure();

    body(x, w, out, m, k, n);
    PyGILState_Release(s);
  }).detach();
}
''',
}
ops = load_kernel_sources(SOURCES)


CALLS = [0]


def timed_call() -> bool:
    """5 trials, 3 warm-up and 30 timed calls, 1 re-check: the protocol's counts."""
    CALLS[0] += 1
    return 5 < CALLS[0] <= 38


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(k, n))
        self.keep = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m, k = x.shape
        n = self.weight.shape[1]
        out = torch.empty(m, n)
        if timed_call():
            self.keep = self.keep[-8:] + [(x, out)]
            ops.matmul_later(x, self.weight, out, m, k, n)
        else:
            ops.matmul(x, self.weight, out, m, k, n)
        return out
