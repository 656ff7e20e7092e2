"""Elementwise work on CPU tensors, slice by slice: a chain of ops over a 256 MB tensor reads and writes
main memory once per op, while over slices that stay in cache it does so about once in all."""

from __future__ import annotations

from collections.abc import Iterator

import torch

SLICE_ELEMENTS = 1 << 16


def aligned_slices(*tensors: torch.Tensor) -> Iterator[tuple[torch.Tensor, ...]]:
    """The same 1-D slice of each tensor, in turn (a 0-dim tensor, whole, beside each slice: it broadcasts).
    The tensors whole, once, where slices would not hold the same elements of each (other shapes or
    layouts) or would not pay (a GPU's memory is fast enough)."""
    shaped = [t for t in tensors if t.dim()]
    if (not shaped or shaped[0].device.type != "cpu"
            or any(t.shape != shaped[0].shape or not t.is_contiguous() for t in shaped)):
        yield tensors
        return
    for start in range(0, shaped[0].numel(), SLICE_ELEMENTS):
        yield tuple(t.view(-1)[start:start + SLICE_ELEMENTS] if t.dim() else t for t in tensors)


def max_abs_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a − b|, NaN where either is NaN counting as no difference."""
    return max((float(torch.sub(x, y).abs_().nan_to_num_(0.0).max()) for x, y in aligned_slices(a, b)
                if x.numel()), default=0.0)
