"""Timing loops, run in the worker for eager, torch.compile and the candidate alike.

Per run, in stream order with no synchronize in between: a short GPU spin, the last-level cache
flush, the next input set's fresh values, the start event, the call, the end event; then a
device-wide synchronize. CUDA events time the call; the host clock around it all, less the spin,
flush and fill as the events saw them, is the second clock.

The host's launch latency (15–50 µs on the H200, varying from one stretch of runs to the next)
hides behind the spin, flush and fill, so the events time the call's device work and stay stable
between processes. Work on a stream of the candidate's own that does not wait for the caller's
stream would also run early (hack 5): it then reads the inputs before this run's values are
written, and the checked timed runs are wrong. Work that waits for the inputs but is never
joined back to the caller's stream outlives the end event, and the host clock shows it. Rotating
buffers with fresh values stops answers looked up by address or value (hacks 3, 16); the flush
stops data the candidate kept resident in L2 from paying (hack 15), while the inputs arrive as
they would from the op before: just written. On the CPU backend both clocks are the host clock,
started after the fill.
"""

from __future__ import annotations

import math
import secrets
import statistics
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import torch

from kernelpilot.harness.slices import aligned_slices

_perf_counter = time.perf_counter

LAUNCH_COVER_CYCLES = 2_000_000
"""GPU cycles of spin ahead of each timed call (~1 ms at full clock): the host's launches queue meanwhile."""


def occupy_stream() -> None:
    """Keep the current stream busy for a while. Ahead of every observed call too, not just the timed
    ones, so that a candidate asking its stream whether work is queued cannot tell which calls are timed."""
    torch.cuda._sleep(LAUNCH_COVER_CYCLES)


@dataclass(frozen=True)
class Samples:
    """Per-run milliseconds: `device` by CUDA events (host clock on CPU); `host` around a device-wide
    sync, less what ran ahead of the start event."""

    device: tuple[float, ...]
    host: tuple[float, ...]
    call_main_cpu: tuple[float, ...] = ()
    """CPU: the calling thread's CPU time inside each call (`time.thread_time`): for eager's runs, in the
    trusted phase, what the judge's window around a call holds beyond it is the harness's own."""

    def to_json(self) -> dict:
        return {"device": list(self.device), "host": list(self.host), "call_main_cpu": list(self.call_main_cpu)}

    @classmethod
    def from_json(cls, data: dict) -> Samples:
        return cls(tuple(float(x) for x in data["device"]), tuple(float(x) for x in data["host"]),
                   tuple(float(x) for x in data.get("call_main_cpu", ())))


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def interquartile_range(values: Sequence[float]) -> float:
    if len(values) < 4:
        return 0.0
    q1, _, q3 = statistics.quantiles(values, n=4)
    return q3 - q1


def spread_pct(values: Sequence[float]) -> float:
    """Interquartile range as a percentage of the median."""
    return 100.0 * interquartile_range(values) / statistics.median(values) if len(values) >= 4 else 0.0


class CacheFlusher:
    def __init__(self, device: str, nbytes: int) -> None:
        self._buffer = torch.empty(nbytes // 4, dtype=torch.float32, device=device)

    def __call__(self) -> None:
        self._buffer.fill_(1.0)


Curve = tuple[float, float, float]
"""A run's sawtooth (`FreshInputs`): its depth, pitch and phase, each drawn uniformly from [0, 1)."""


def fresh_curve() -> Curve:
    """A curve from the operating system's randomness: the judge's, for one of the candidate's timed runs."""
    return tuple(secrets.randbits(53) / (1 << 53) for _ in range(3))


class FreshInputs:
    """Every call sees values it has never seen: each element x of an input set becomes
    x · (1 + c · frac(b · x / rms + t)), for new random c, b and t per run.

    Rotating a few fixed sets lets an answer table keyed on input values hit on almost every timed
    run (hack 16), and a factor alone does not stop it where the task is linear (a matmul's cached
    answer times the factor is right). Nor does a smooth curve of one random parameter: red team 33 wrote
    each new input of a set as a weighted sum of two earlier ones and a linear task's answer as the same sum
    of theirs. A sawtooth of random pitch and phase gives each run its own pattern of factors, which no few
    earlier ones combine into. It keeps signs, zeros (so a triangular or sparse input keeps its shape) and
    magnitudes within a quarter, so the work is the same, and costs three elementwise passes. The same sets
    and `seed` give the same inputs run for run (the keeper rebuilds a timed run's bit for bit). The candidate's timed runs get their curves from the judge
    instead, one run at a time (`scaled(i, curve)`): a seed in its process told it every run's inputs ahead.
    """

    def __init__(self, input_sets: Sequence[Sequence[object]], seed: int) -> None:
        self._bases = input_sets
        self._inverse_rms = [[math.sqrt(_inverse_square_rms(x)) if _scalable(x) else None for x in inputs]
                             for inputs in input_sets]
        self._work = [x.clone() if _scalable(x) else x for x in input_sets[0]]
        self._generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return len(self._bases)

    def scaled(self, i: int, curve: Curve | None = None) -> Sequence[object]:
        """The inputs of run `i`: set `i` modulo the sets, through this run's sawtooth (drawn from the seed
        unless `curve` gives it), in the same buffers."""
        depth, pitch, phase = curve or tuple(float(v) for v in torch.rand(3, generator=self._generator))
        depth, pitch = 0.1 + 0.15 * depth, 20.0 + 80.0 * pitch  # never near zero: never near a plain factor
        k = i % len(self._bases)
        args = []
        for buffer, base, inverse_rms in zip(self._work, self._bases[k], self._inverse_rms[k]):
            if inverse_rms is None:
                args.append(base)
                continue
            if buffer.shape != base.shape:  # a task whose sets differ in shape
                buffer = torch.empty_like(base)
            offset = torch.full((), phase, dtype=base.dtype, device=base.device)
            # whole: over cache-sized slices the worker's passive OpenMP threads are woken for each op (5x slower)
            torch.add(offset, base, alpha=pitch * inverse_rms, out=buffer).frac_()
            torch.addcmul(base, base, buffer, value=depth, out=buffer)
            args.append(buffer)
        return args

    def wipe(self) -> None:
        """Zero every buffer: freed memory the candidate's code allocates again must not hold these inputs."""
        for inputs in [*self._bases, self._work]:
            for x in inputs:
                if isinstance(x, torch.Tensor):
                    x.zero_()


def _inverse_square_rms(x: torch.Tensor) -> float:
    """1 / mean(x²), or 1 where that is not a positive finite number (all zeros, an infinity). Slice by slice:
    a float64 copy of a whole 256 MB input costs the CPU 0.4 s, and each timing loop reads every input set."""
    mean_square = sum(float(torch.linalg.vector_norm(part, dtype=torch.float64)) ** 2
                      for (part,) in aligned_slices(x)) / max(x.numel(), 1)
    return 1.0 / mean_square if math.isfinite(mean_square) and mean_square > 0 else 1.0


def _scalable(x: object) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def reseed() -> None:
    """A new seed for torch's generators before every call: a seed that stays put from call to call
    (`torch.initial_seed()`) would tell the timed calls from the checked ones, which each get their own.

    The CPU's and the GPUs' generators directly: `torch.manual_seed` also queues seeds for backends never
    started (XPU, MTIA; CUDA on the CPU), formatting the whole stack for each, 0.2–0.5 ms a call, and more
    once the candidate's import adds the audit hook (`reach`): time in its runs alone, which the judge's
    own clock read as the candidate's (`unaccounted_time` for kernels of tens of microseconds)."""
    seed = secrets.randbits(63)
    torch.default_generator.manual_seed(seed)
    if torch.cuda.is_initialized():
        for generator in torch.cuda.default_generators:
            generator.manual_seed(seed)


def time_calls(fn: Callable, inputs: FreshInputs, device: str, warmup: int, runs: int,
               flush: CacheFlusher, after_run: Callable[[int, object], None] | None = None,
               around: Callable[[], AbstractContextManager] = nullcontext,
               before_call: Callable[[int], None] | None = None,
               after_call: Callable[[int, object], None] | None = None,
               curves: Callable[[int], Curve] | None = None) -> Samples:
    """Time `fn(*inputs)` `runs` times over fresh input values (timed run i's curve from `curves(i)` where it
    is given, asked for just before the run's inputs are written).

    `after_run(run, output)` is called after each timed run, outside the timed region; on the CPU
    `before_call(run)` just before the call, once the cache is flushed and the inputs written, and
    `after_call(run, output)` as soon as it returned and its clock stopped (the parent reads the worker's CPU
    time at both, and the answers at the second); `around()`
    wraps each call, warm-up ones too, entered before the host clock starts (on CUDA the host's time
    until the call's kernels are queued is hidden behind the spin anyway).
    """
    cuda = device == "cuda"
    for i in range(warmup):
        args = inputs.scaled(i)
        reseed()
        with around():
            fn(*args)
    if cuda:
        torch.cuda.synchronize()
        stream = torch.cuda.current_stream()
    device_ms, host_ms, call_cpu = [], [], []
    for i in range(runs):
        curve = curves(i) if curves is not None else None  # outside every clock: the first may be a round trip
        if cuda:
            ahead, start, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            torch.cuda.synchronize()  # whatever `after_run` queued stays out of the host clock
            t0 = _perf_counter()
            ahead.record(stream)
            occupy_stream()
            flush()
            args = inputs.scaled(i, curve)
            reseed()
            with around():
                start.record(stream)
                output = fn(*args)
                end.record(stream)
            torch.cuda.synchronize()
            host_ms.append((_perf_counter() - t0) * 1e3 - ahead.elapsed_time(start))
            device_ms.append(start.elapsed_time(end))
        else:
            if i == 0:
                flush()
            args = inputs.scaled(i, curve)
            reseed()
            if before_call is not None:
                before_call(i)
            with around():
                cpu0 = time.thread_time()
                t0 = _perf_counter()
                output = fn(*args)
                elapsed = (_perf_counter() - t0) * 1e3
                call_cpu.append((time.thread_time() - cpu0) * 1e3)
                if after_call is not None:
                    after_call(i, output)
            host_ms.append(elapsed)
            device_ms.append(elapsed)
            flush()  # the next run's, before this one's report: the judge's CPU reading at the report parts the
            # flush, whose CPU varies with the cores' other load, from the next inputs' fill, which it holds close
        if after_run is not None:
            after_run(i, output)
    return Samples(tuple(device_ms), tuple(host_ms), tuple(call_cpu))
