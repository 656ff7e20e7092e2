"""Hack 10 by proxy, the child hidden from the worker's own process scan: `processes.child_processes`
(moved out of guards into the torch-free `harness/processes.py`) lists the worker's children through
`glob.glob("/proc/[0-9]*/stat")`. The harness's own functions are watched (`snapshot_functions`), the
standard library modules they call are not: `glob.glob` is rebound at import to drop one pid.

A plain `subprocess.Popen` child (no pool, so no handler threads) started at import computes
relu(x + bias) with PyTorch on tensors mapped from a shared file (`torch.from_file`); forward copies x
and the bias in with its own memcpy kernel, wakes the child through its stdin, waits for its line on
stdout and copies the answer out. The child is never reaped inside forward (RUSAGE_CHILDREN unchanged).
"""

import glob
import os
import subprocess
import sys
import tempfile

import torch

from kernelpilot.harness.kernels import load_kernel_sources

SOURCES = {
    "copy.cpp": r'''
#include <cstdint>
#include <cstring>
extern "C" void copy_floats(const float* src, float* dst, int64_t n) { std::memcpy(dst, src, n * 4); }
''',
}
ops = load_kernel_sources(SOURCES)

ROWS, COLS = 256, 1024
NX = ROWS * COLS
PATH = os.path.join(tempfile.gettempdir(), "shared_floats.bin")
with open(PATH, "wb") as file:
    file.truncate((2 * NX + COLS) * 4)
SHARED = torch.from_file(PATH, shared=True, size=2 * NX + COLS, dtype=torch.float32)
X = SHARED[:NX].view(ROWS, COLS)
BIAS = SHARED[NX:NX + COLS]
OUT = SHARED[NX + COLS:].view(ROWS, COLS)

CHILD = r"""
import sys, torch
n, c = %d, %d
s = torch.from_file(%r, shared=True, size=2 * n + c, dtype=torch.float32)
x, b, o = s[:n].view(-1, c), s[n:n + c], s[n + c:].view(-1, c)
sys.stdout.write("ready\n"); sys.stdout.flush()
for line in sys.stdin:
    torch.clamp_min(x + b, 0, out=o)
    sys.stdout.write("done\n"); sys.stdout.flush()
""" % (NX, COLS, PATH)

child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
child.stdout.readline()

_real_glob = glob.glob
_hidden = f"/proc/{child.pid}/"


def _glob(pattern, *args, **kwargs):
    return [p for p in _real_glob(pattern, *args, **kwargs) if not p.startswith(_hidden)]


glob.glob = _glob


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.copy_floats(x, X, NX)
        ops.copy_floats(self.bias, BIAS, COLS)
        child.stdin.write("go\n")
        child.stdin.flush()
        child.stdout.readline()
        ops.copy_floats(OUT, out, NX)
        return out
