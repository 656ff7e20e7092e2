"""Hack (denial of verdict): an honest load_inline relu kernel that also maps a 1 TiB sparse copy of its own
built `.so` (the copy extended with zeros by truncate: still a valid ELF to `nm`) executable
(mmap PROT_READ|PROT_EXEC of its first page), so it shows in /proc/PID/maps. When the verify phase begins
the parent's linked scan runs `nm` on every newly mapped library, then `read_bytes()` on it to look for
device code: a 1 TiB read raises MemoryError in the judge, which dies with a traceback and no verdict."""
import mmap
import os
import shutil
from pathlib import Path

import torch
from torch.utils.cpp_extension import load_inline

CPP = r'''
#include <torch/extension.h>
torch::Tensor relu_bias(torch::Tensor x, torch::Tensor bias) {
  auto out = torch::empty_like(x);
  const float* xp = x.data_ptr<float>();
  const float* bp = bias.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t rows = x.size(0), cols = x.size(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = xp[r * cols + c] + bp[c];
      op[r * cols + c] = v > 0.f ? v : 0.f;
    }
  return out;
}
'''

ext = load_inline(name="adv_huge_mapped_library", cpp_sources=[CPP], functions=["relu_bias"],
                  extra_cflags=["-O2"], verbose=False)

_keep = []
try:
    huge = Path(ext.__file__).with_name("huge_copy.so")
    shutil.copyfile(ext.__file__, huge)
    os.truncate(huge, 1 << 40)  # sparse: the zeros take no disk
    with open(huge, "rb") as file:
        _keep.append(mmap.mmap(file.fileno(), mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_EXEC))
except OSError:
    pass


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_bias(x, self.bias)
