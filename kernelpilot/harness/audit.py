"""Op audit: which PyTorch operations a candidate's forward really ran.

Two independent recorders, because a candidate that defeats one rarely defeats both:
- a `TorchDispatchMode`, which sees every ATen op whichever route called it (`torch.*`, tensor
  methods, `torch.ops.aten`, names bound at import, ATen called from C++ inside an extension);
- the profiler's ATen events (RecordFunction, in C++), which a Python-level trick cannot switch off.
Monkey-patching `torch.nn.functional` (CUDA Agent's guard) misses most of these routes.

Every call of the candidate's forward is watched, timed ones too: a candidate that counts calls, or
asks whether it is watched, finds no call where PyTorch's compute goes unseen. The timed calls get the
profiler alone, started once around the whole timing loop: ~3 µs per op inside a call, where the
dispatch mode's Python costs 20–80 µs per call on the CPU.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict
from contextlib import AbstractContextManager

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity
from torch._C._profiler import _ExperimentalConfig
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


WATCHED_CALL = "kernelpilot.watched_call"


def watching_calls(activities: list | None = None) -> torch.profiler.profile:
    """The profiler for watched calls: host events of every thread (work handed to a thread that forward
    starts and joins is forward's work), and nothing added on the device unless `activities` asks."""
    return torch.profiler.profile(activities=activities or [ProfilerActivity.CPU],
                                  experimental_config=_ExperimentalConfig(profile_all_threads=True))


def mark_call() -> AbstractContextManager:
    """A range around one of the candidate's calls, entered and left outside its timed region: the ops
    inside it are the candidate's, the flush and input fill between calls are the harness's."""
    return torch.profiler.record_function(WATCHED_CALL)


def watched_ops(profile: torch.profiler.profile) -> tuple[int, Counter[str]]:
    """How many marked calls the profiler saw (fewer than ran: it was switched off), and the ATen ops
    run inside them or on any other thread (the harness starts none while it watches).

    Read from the profiler's raw events: its Python event tree took a minute for 280 000 events on two cores
    (forty watched runs of a forward of 7000 ops; a recurrent task's forward runs 60 000). Per event, only what
    is needed: asking an event for its device costs twice its name, and only a profile with device activities
    has events off the host."""
    device_events = any(activity != ProfilerActivity.CPU for activity in profile.activities)
    marks: dict[int, list[tuple[int, int]]] = defaultdict(list)
    ops_by_thread: list[tuple[int, int, str]] = []
    for event in profile.profiler.kineto_results.events():
        name = event.name()
        if device_events and event.device_type() != DeviceType.CPU:
            continue
        if name == WATCHED_CALL:
            start = event.start_ns()
            marks[event.start_thread_id()].append((start, start + event.duration_ns()))
        elif name.startswith("aten::"):
            ops_by_thread.append((event.start_thread_id(), event.start_ns(), name))
    for spans in marks.values():
        spans.sort()
    by_event_name: Counter[str] = Counter()
    for thread, start, name in ops_by_thread:
        spans = marks.get(thread)
        if spans is None or _within(spans, start):
            by_event_name[name] += 1
    ops: Counter[str] = Counter()
    for name, count in by_event_name.items():
        ops[op_name(name)] += count
    return sum(len(spans) for spans in marks.values()), ops


def _within(spans: list[tuple[int, int]], moment: int) -> bool:
    """Whether `moment` falls in one of `spans` (sorted (start, end) pairs that never overlap: calls in turn)."""
    i = bisect.bisect_right(spans, (moment, math.inf)) - 1
    return i >= 0 and spans[i][0] <= moment <= spans[i][1]
