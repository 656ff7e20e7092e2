"""Timing loops, run in the worker for eager, torch.compile and the candidate alike.

Per run: flush the last-level cache, rotate to the next input set, then time the call two ways —
CUDA events on the stream the work runs on, and the host clock around a device-wide synchronize.
Work hidden on another stream shows up as the difference between the two (hack 5); the cache flush
stops data resident in L2 from paying (hack 15); rotation stops answers looked up by address or
value (hacks 3, 16). On the CPU backend both clocks are the host clock.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

_perf_counter = time.perf_counter


@dataclass(frozen=True)
class Samples:
    """Per-run milliseconds: `device` by CUDA events (host clock on CPU), `host` around a full sync."""

    device: tuple[float, ...]
    host: tuple[float, ...]

    def to_json(self) -> dict:
        return {"device": list(self.device), "host": list(self.host)}

    @classmethod
    def from_json(cls, data: dict) -> Samples:
        return cls(tuple(float(x) for x in data["device"]), tuple(float(x) for x in data["host"]))


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def spread_pct(values: Sequence[float]) -> float:
    """Interquartile range as a percentage of the median."""
    if len(values) < 4:
        return 0.0
    q1, _, q3 = statistics.quantiles(values, n=4)
    return 100.0 * (q3 - q1) / statistics.median(values)


class CacheFlusher:
    def __init__(self, device: str, nbytes: int) -> None:
        self._buffer = torch.empty(nbytes // 4, dtype=torch.float32, device=device)

    def __call__(self) -> None:
        self._buffer.fill_(1.0)


def time_calls(fn: Callable, input_sets: Sequence[Sequence[object]], device: str, warmup: int, runs: int,
               flush: CacheFlusher, after_run: Callable[[int, object], None] | None = None) -> Samples:
    """Time `fn(*inputs)` `runs` times, rotating through `input_sets`.

    `after_run(i, output)` is called outside the timed region of each run (the spot check).
    """
    cuda = device == "cuda"
    for i in range(warmup):
        fn(*input_sets[i % len(input_sets)])
    if cuda:
        torch.cuda.synchronize()
        stream = torch.cuda.current_stream()
    device_ms, host_ms = [], []
    for i in range(runs):
        inputs = input_sets[i % len(input_sets)]
        flush()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            t0 = _perf_counter()
            start.record(stream)
            output = fn(*inputs)
            end.record(stream)
            torch.cuda.synchronize()
            host_ms.append((_perf_counter() - t0) * 1e3)
            device_ms.append(start.elapsed_time(end))
        else:
            t0 = _perf_counter()
            output = fn(*inputs)
            elapsed = (_perf_counter() - t0) * 1e3
            host_ms.append(elapsed)
            device_ms.append(elapsed)
        if after_run is not None:
            after_run(i, output)
    return Samples(tuple(device_ms), tuple(host_ms))
