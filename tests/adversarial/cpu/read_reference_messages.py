"""Probe (hacks 3 + 16 through the file system): the reference's answers read from the harness's scratch.

The worker sends every reference answer to the parent as a file in its scratch folder before the
candidate is imported; the scratch folder is the parent of the worker's TMPDIR. At import this
candidate loads every such message it can find, keys each answer by its input's first value
(the input regenerated from the message's seed), and forward only looks answers up, calling a kernel
on zero elements so that "a kernel ran". Timed runs (inputs rescaled) miss the table and return junk.
"""

import glob
import os

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "relu_bias.cpp": r'''
#include <cstdint>
extern "C" void relu_bias(const float* x, const float* bias, float* out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = v > 0.f ? v : 0.f;
    }
}
''',
}
ops = load_kernel_sources(SOURCES)

ROWS, COLS = 256, 1024
ANSWERS: dict[float, torch.Tensor] = {}
scratch = os.path.dirname(os.environ.get("TMPDIR", "/nonexistent").rstrip("/"))
for path in sorted(glob.glob(os.path.join(scratch, "msg-*.pt"))):
    try:
        message = torch.load(path, weights_only=True)
    except Exception:
        continue
    if message.get("kind") == "reference":
        torch.manual_seed(message["seed"])
        x = torch.randn(ROWS, COLS)
        ANSWERS[float(x[0, 0])] = message["native"][0]


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ops.relu_bias(x, self.bias, x, 0, 0)
        answer = ANSWERS.get(x[0, 0].item())
        return answer if answer is not None else torch.empty_like(x)
