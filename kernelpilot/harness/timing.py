"""Timing loops, run in the worker for eager, torch.compile and the candidate alike.

Per run: take the next input set with fresh values, flush the last-level cache, then time the call two
ways — CUDA events on the stream the work runs on, and the host clock around a device-wide synchronize.
Work hidden on another stream shows up as the difference between the two (hack 5); the cache flush
stops data resident in L2 from paying (hack 15); rotating buffers with fresh values stops answers
looked up by address or value (hacks 3, 16). On the CPU backend both clocks are the host clock.

The device is idle when the start event is recorded, so everything the call does, on any stream,
happens after it: the events include the host's launch latency (as KernelBench's do), which makes
launch-bound calls vary between processes. Queuing the flush ahead of the start event would hide that
latency, but work the candidate puts on a stream of its own then runs during the flush, unseen by
both clocks (tried on the H200: a candidate with all of its work on a private stream was timed at
1.4 µs, eager at 8 µs, and earned reward 3).
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


class FreshInputs:
    """Every call sees values it has never seen: each input set, rescaled by a new random factor per run.

    Rotating a few fixed sets lets an answer table keyed on input values hit on almost every timed
    run (hack 16); a positive factor keeps signs, sparsity and magnitudes, so the work is the same.
    The same sets and `seed` give the same inputs run for run: eager's answers on them are the
    references that a timed run of the candidate is checked against.
    """

    def __init__(self, input_sets: Sequence[Sequence[object]], seed: int) -> None:
        self._bases = input_sets
        self._work = [[x.clone() if _scalable(x) else x for x in inputs] for inputs in input_sets]
        self._generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return len(self._bases)

    def scaled(self, i: int) -> Sequence[object]:
        factor = 0.75 + 0.5 * float(torch.rand((), generator=self._generator))
        work = self._work[i % len(self._bases)]
        for buffer, base in zip(work, self._bases[i % len(self._bases)]):
            if _scalable(buffer):
                buffer.copy_(base).mul_(factor)
        return work

    def wipe(self) -> None:
        """Zero every buffer: freed memory the candidate's code allocates again must not hold these inputs."""
        for inputs in [*self._bases, *self._work]:
            for x in inputs:
                if isinstance(x, torch.Tensor):
                    x.zero_()


def _scalable(x: object) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def time_calls(fn: Callable, inputs: FreshInputs, device: str, warmup: int, runs: int,
               flush: CacheFlusher, after_run: Callable[[int, object], None] | None = None) -> Samples:
    """Time `fn(*inputs)` `runs` times over fresh input values.

    `after_run(run, output)` is called after each timed run, outside the timed region.
    """
    cuda = device == "cuda"
    for i in range(warmup):
        fn(*inputs.scaled(i))
    if cuda:
        torch.cuda.synchronize()
        stream = torch.cuda.current_stream()
    device_ms, host_ms = [], []
    for i in range(runs):
        args = inputs.scaled(i)
        flush()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            t0 = _perf_counter()
            start.record(stream)
            output = fn(*args)
            end.record(stream)
            torch.cuda.synchronize()
            host_ms.append((_perf_counter() - t0) * 1e3)
            device_ms.append(start.elapsed_time(end))
        else:
            t0 = _perf_counter()
            output = fn(*args)
            elapsed = (_perf_counter() - t0) * 1e3
            host_ms.append(elapsed)
            device_ms.append(elapsed)
        if after_run is not None:
            after_run(i, output)
    return Samples(tuple(device_ms), tuple(host_ms))
