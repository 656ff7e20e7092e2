"""A timed run's answers at a few thousand positions the judge names only after the run: no run can be skipped
or cached (hacks 3, 16). Both sides draw the positions the same way (`sample_positions`).

On the CPU the judge reads them itself, out of the worker's memory, while the worker is stopped at the moment
its clock stopped (`read_samples`): a thread of the candidate's that fills the answer after the clock (red
team 31) finds it already read. On CUDA the worker samples a copy it took on the stream (`worker.sample_outputs`).
"""

from __future__ import annotations

import ctypes
import math
import os
from dataclasses import dataclass

import torch

from kernelpilot.harness.protocol import CHECK_SAMPLES
from kernelpilot.harness.task import as_outputs

IOV_MAX = 1024
"""The most pieces one `process_vm_readv` call takes."""


@dataclass(frozen=True)
class OutputLayout:
    """Where a CPU output's elements lie in the worker's memory, read by its harness as the call returned."""

    address: int
    """Its first element's."""
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: str
    negated: bool
    """A lazily negated or conjugated view: its bytes are not its values."""
    conjugated: bool


def layout_of(output: object) -> OutputLayout | None:
    """None for anything but a plain CPU tensor: a subclass is never touched (touching it runs its code)."""
    if type(output) is not torch.Tensor or output.device.type != "cpu":
        return None
    return OutputLayout(output.data_ptr(), tuple(output.shape), tuple(output.stride()),
                        str(output.dtype).removeprefix("torch."), output.is_neg(), output.is_conj())


def sample_positions(numel: int, generator: torch.Generator) -> torch.Tensor:
    """Flat positions (row-major, as `reshape(-1)` numbers them) of one output's sampled elements."""
    if not numel:
        return torch.zeros(0, dtype=torch.long)
    return torch.randint(numel, (min(numel, CHECK_SAMPLES),), generator=generator)


def sample_outputs(output: object, seed: int) -> list[torch.Tensor | None]:
    """Each output's values at the positions `seed` draws, sampled in this process (CUDA: the worker's copy of a
    timed run's answers; the keeper's reference answers), the same positions `read_samples` reads."""
    generator = torch.Generator().manual_seed(seed)
    samples: list[torch.Tensor | None] = []
    for out in as_outputs(output):
        if type(out) is not torch.Tensor:  # a subclass is never touched: touching it would run its code
            samples.append(None)
            continue
        flat = out.detach().reshape(-1)
        samples.append(flat[sample_positions(flat.numel(), generator).to(flat.device)].cpu())
    return samples


class UnreadableOutput(Exception):
    """The worker's memory where its harness said an output lies could not be read."""


def read_samples(pid: int, layouts: list[OutputLayout | None],
                 seed: int) -> tuple[list[torch.Tensor | None], list[tuple[int, ...] | None]]:
    """Each output's values at the positions `seed` draws, read from process `pid` (stopped meanwhile), and
    its shape; None for an output that is no plain tensor."""
    generator = torch.Generator().manual_seed(seed)
    samples: list[torch.Tensor | None] = []
    for i, layout in enumerate(layouts):
        if layout is None:
            samples.append(None)
            continue
        dtype = getattr(torch, layout.dtype, None)
        if not isinstance(dtype, torch.dtype) or len(layout.shape) != len(layout.stride) or \
                any(size < 0 for size in layout.shape):
            raise UnreadableOutput(f"output {i}: a layout no tensor has")
        positions = sample_positions(math.prod(layout.shape), generator)
        offsets = torch.zeros_like(positions)
        if len(positions):
            for size, step in zip(reversed(layout.shape), reversed(layout.stride)):
                offsets += (positions % size) * step
                positions = positions // size
        values = _read(pid, layout.address + offsets * dtype.itemsize, dtype)
        if layout.conjugated:
            values = values.conj().resolve_conj()
        samples.append(values.neg() if layout.negated else values)
    return samples, [layout.shape if layout else None for layout in layouts]


def _read(pid: int, addresses: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """One element of `dtype` at each address of process `pid`: `process_vm_readv`, a batch of pieces a call."""
    values = torch.empty(len(addresses), dtype=dtype)
    size = dtype.itemsize
    for first in range(0, len(addresses), IOV_MAX):
        count = min(IOV_MAX, len(addresses) - first)
        local = torch.stack([values.data_ptr() + size * torch.arange(first, first + count),
                             torch.full((count,), size)], 1).contiguous()
        remote = torch.stack([addresses[first:first + count], torch.full((count,), size)], 1).contiguous()
        done = _process_vm_readv(pid, ctypes.c_void_p(local.data_ptr()), count,
                                 ctypes.c_void_p(remote.data_ptr()), count, 0)
        if done != size * count:
            why = os.strerror(ctypes.get_errno()) if done < 0 else "an address unmapped"
            raise UnreadableOutput(f"{max(done, 0)} of {size * count} bytes read: {why}")
    return values


_libc = ctypes.CDLL(None, use_errno=True)
_process_vm_readv = _libc.process_vm_readv
_process_vm_readv.restype = ctypes.c_ssize_t
_process_vm_readv.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                              ctypes.c_ulong]
