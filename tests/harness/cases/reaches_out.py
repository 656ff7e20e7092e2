"""An honest kernel that first reaches out of its sandbox, and refuses to load if it can: if any process
above it is the `kernelpilot eval` that will judge it (that process could be stopped, killed or read),
if it can leave a file next to kernelpilot's own modules (it could rewrite the judge for every later
evaluation), if it holds any effective capability or can remount the read-only root read-write (then
nothing is read-only), or if it can leave a file in the /dev/shm its scratch folder lives in (other
evaluations' scratch). A file it could leave in the host's /dev/shm is found by the test, outside."""

import os
import subprocess
import tempfile
from pathlib import Path

import torch

import kernelpilot
from kernelpilot.harness.kernels import load_kernel_sources


def ancestors(pid: int):
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                yield pid, cmdline.read().split(b"\0")
        except OSError:
            return


for pid, argv in ancestors(os.getpid()):
    if any(arg.endswith(b"kernelpilot") for arg in argv) and b"eval" in argv:
        raise RuntimeError(f"the judge is visible as process {pid}")

MARK = Path(kernelpilot.__file__).parent / "candidate_was_here"
try:
    MARK.write_text("rewritten\n")
except OSError:
    pass
else:
    raise RuntimeError(f"wrote {MARK}")

status = Path(f"/proc/{os.getpid()}/status").read_text()
cap_eff = next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff:"))
if int(cap_eff, 16):
    raise RuntimeError(f"effective capabilities {cap_eff}")

if os.statvfs("/").f_flag & os.ST_RDONLY:  # never tried on a writable root: that would be the host's
    try:
        remount = subprocess.run(["mount", "-o", "remount,bind,rw", "/"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        remount = None
    if remount is not None and remount.returncode == 0:
        raise RuntimeError("remounted / read-write")

SHM_MARK = Path("/dev/shm/kernelpilot-candidate-was-here")
try:
    SHM_MARK.write_text("left\n")
except OSError:
    pass
else:
    if os.stat("/dev/shm").st_dev == os.stat(tempfile.gettempdir()).st_dev:
        raise RuntimeError(f"wrote {SHM_MARK}, beside its own scratch folder")

ops = load_kernel_sources({
    "relu_bias_scale.cpp": r'''
#include <cstdint>
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = (v > 0.f ? v : 0.f) * scale;
    }
}
''',
})


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias_scale(x, self.bias, out, x.shape[0], x.shape[1], self.scale)
        return out
