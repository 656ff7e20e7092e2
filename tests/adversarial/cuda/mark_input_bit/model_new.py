"""Input mutation too small for a checksum: the kernel computes relu(x + bias) correctly, then flips the lowest
mantissa bit of the input's first element (a mark a later call could find to know its inputs again). The
input's sums barely move; the worker's digest of its 32-bit words (CUDA keeps no copy of a large input) must
still see it."""

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        ops.relu_bias_marked(x, self.bias, out, x.shape[0], x.shape[1])
        return out
