"""Op audit: which PyTorch operations a candidate's forward really ran.

Two independent recorders, because a candidate that defeats one rarely defeats both:
- a `TorchDispatchMode`, which sees every ATen op whichever route called it (`torch.*`, tensor
  methods, `torch.ops.aten`, names bound at import, ATen called from C++ inside an extension);
- the profiler's ATen events (RecordFunction, in C++), which a Python-level trick cannot switch off.
Monkey-patching `torch.nn.functional` (CUDA Agent's guard) misses most of these routes.
"""

from __future__ import annotations

from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ALLOCATION_AND_VIEW_OPS = frozenset({
    # allocation
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "zero_", "resize_", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
    # views and metadata
    "view", "_unsafe_view", "reshape", "as_strided", "t", "transpose", "permute", "expand", "squeeze",
    "unsqueeze", "slice", "select", "unbind", "split", "split_with_sizes", "chunk", "narrow", "alias",
    "detach", "view_as", "flatten", "unflatten", "movedim", "contiguous", "_reshape_alias", "numpy_T",
    "expand_as", "is_same_size", "_local_scalar_dense", "item", "size", "stride", "dim", "is_contiguous",
    "record_stream", "set_",
    # profiler bookkeeping
    "_record_function_enter_new", "_record_function_exit",
})
"""What `strict` lets through: memory to write into and ways to look at it — never arithmetic or copies."""


def op_name(op: object) -> str:
    """`aten.relu.default` / `aten::relu` → `relu` (in-place and out= variants keep their own names)."""
    text = str(op)
    text = text.split("::", 1)[-1] if "::" in text else text.split(".", 1)[-1]
    return text.split(".", 1)[0]


def disallowed(ops: Counter[str]) -> list[str]:
    return sorted(name for name in ops if name not in ALLOCATION_AND_VIEW_OPS)


class DispatchRecorder(TorchDispatchMode):
    """Counts every ATen op dispatched while active, and runs it unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[op_name(func)] += 1
        return func(*args, **(kwargs or {}))


def profiler_ops(profile: torch.profiler.profile) -> Counter[str]:
    """ATen ops the profiler saw (top-level and nested)."""
    ops: Counter[str] = Counter()
    for event in profile.events():
        if event.name.startswith("aten::"):
            ops[op_name(event.name)] += 1
    return ops
