"""Elementwise work on CPU tensors, slice by slice: a chain of ops over a 256 MB tensor reads and writes
main memory once per op, while over slices that stay in cache it does so about once in all."""

from __future__ import annotations

from collections.abc import Iterator

import torch

SLICE_ELEMENTS = 1 << 16


def aligned_slices(*tensors: torch.Tensor) -> Iterator[tuple[torch.Tensor, ...]]:
    """The same 1-D slice of each tensor, in turn. The tensors whole, once, where slices would not hold the
    same elements of each (other shapes or layouts) or would not pay (a GPU's memory is fast enough)."""
    first = tensors[0]
    if first.device.type != "cpu" or any(t.shape != first.shape or not t.is_contiguous() for t in tensors):
        yield tensors
        return
    flats = [t.view(-1) for t in tensors]
    for start in range(0, first.numel(), SLICE_ELEMENTS):
        yield tuple(flat[start:start + SLICE_ELEMENTS] for flat in flats)


def max_abs_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a − b|, NaN where either is NaN counting as no difference."""
    return max((float(torch.sub(x, y).abs_().nan_to_num_(0.0).max()) for x, y in aligned_slices(a, b)
                if x.numel()), default=0.0)
