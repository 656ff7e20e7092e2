"""Hack 10 by proxy (a cousin of hack 6): PyTorch does the work in a child process started at import.

The op audit, the profiler and the thread checks all look at the worker's own process; a pool of
processes spawned at import computes `relu(x + bias)` with PyTorch out of their sight, and forward
only ships the tensors there and back.
"""

import multiprocessing

import torch

WORK = "__import__('torch').relu(x + bias)"
pool = multiprocessing.get_context("spawn").Pool(1)
pool.apply(eval, ("1", {}))  # the child's interpreter and torch are loaded now, not in forward


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return pool.apply(eval, (WORK, {"x": x, "bias": self.bias.detach()}))
