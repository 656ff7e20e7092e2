"""Hack 5, timed-loop form: the work starts on a private stream at once, without waiting for the caller's
stream, and the caller's stream waits for it. While the harness's flush is still running, the work would
be done before the start event; it then reads the inputs before their new values are written."""

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
        ops.relu_bias_ahead(x, self.bias, out, x.shape[0], x.shape[1])
        return out
