"""A candidate's output on its way to the judge, without a trip through the message channel: on CUDA the
driver's IPC handle of the device memory that holds it, on the CPU a file in the worker's scratch folder.

The worker shares a snapshot it took on the stream forward ran on (`Snapshot`), and keeps it until the judge
has copied it (`copied`): what the judge compares is the judge's own copy, which no code of the candidate's
can reach.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import torch

from kernelpilot.harness import cuda_ipc, guards


def read_regular_file(path: Path, max_bytes: int | None) -> bytes:
    """The bytes of a plain file of at most `max_bytes`, never following a link nor blocking: a FIFO, a link
    to /dev/zero or a sparse terabyte that the candidate's code names on the pipe would stall, flood or
    exhaust the judge."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a plain file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise OSError(f"{path.name} holds {info.st_size} bytes, more than any message of this task ({max_bytes})")
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(max_bytes + 1 if max_bytes is not None else -1)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class SharedOutput:
    """Where one output waits, and its layout."""

    handle: str
    """The CUDA IPC handle of its allocation (hex), or its file's name in the scratch folder."""
    offset: int
    """Bytes from the allocation's (file's) start to its first element."""
    nbytes: int
    """Bytes from there to its last element, inclusive."""
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: str
    digest: str = ""
    """A file's SHA-256, taken as it was written and sent in the signed message: the candidate's code can
    rewrite the file before the judge reads it, not the digest. (Device memory is copied by the judge
    while the worker waits, from a snapshot whose address the candidate never learns.)"""


def span_bytes(shape: tuple[int, ...], stride: tuple[int, ...], itemsize: int) -> int:
    """Bytes a strided tensor reaches from its first element to its last."""
    if 0 in shape:
        return 0
    return (sum((size - 1) * step for size, step in zip(shape, stride)) + 1) * itemsize


@dataclass
class Snapshot:
    """An output's values as forward left them on its stream, in memory of the harness's own."""

    tensor: torch.Tensor
    buffer: cuda_ipc.DeviceBuffer | None = None
    """On CUDA: the driver's memory the tensor lies in."""

    def release(self) -> None:
        if self.buffer is not None:
            self.buffer.free()


def take_snapshot(output: torch.Tensor) -> Snapshot:
    """A copy of `output` in the same layout (contiguous where elements share memory, as a broadcast's do),
    queued on the current stream: work the candidate left running on another stream is not waited for."""
    if not output.is_cuda:
        return Snapshot(output.detach().clone())
    stride = tuple(output.stride()) if guards.is_dense(output) else torch.empty(output.shape, device="meta").stride()
    buffer = cuda_ipc.DeviceBuffer(span_bytes(tuple(output.shape), stride, output.element_size()))
    view = buffer.view(output.dtype, tuple(output.shape), stride)
    view.copy_(output.detach())
    return Snapshot(view, buffer)


def share(snapshot: Snapshot, scratch: Path, name: str) -> SharedOutput:
    """`snapshot` (kept until the judge has copied it) shared with the judge."""
    tensor = snapshot.tensor
    shape, stride = tuple(tensor.shape), tuple(tensor.stride())
    nbytes = span_bytes(shape, stride, tensor.element_size())
    dtype = str(tensor.dtype).removeprefix("torch.")
    if snapshot.buffer is not None:
        return SharedOutput(snapshot.buffer.export() if nbytes else "", 0, nbytes, shape, stride, dtype)
    storage = torch.empty(0, dtype=torch.uint8).set_(tensor.untyped_storage())
    offset = tensor.storage_offset() * tensor.element_size()
    data = storage[offset:offset + nbytes].numpy()
    data.tofile(scratch / name)
    return SharedOutput(name, 0, nbytes, shape, stride, dtype, hashlib.sha256(data).hexdigest())


def copied(shared: SharedOutput, scratch: Path, device: torch.device) -> torch.Tensor:
    """The judge's own contiguous copy of a shared output. Raises OSError / CudaIpcError / ValueError for one
    that cannot be read as it is described."""
    dtype = getattr(torch, shared.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {shared.dtype!r}")
    if any(size < 0 for size in shared.shape) or any(step < 0 for step in shared.stride) or \
            len(shared.shape) != len(shared.stride):
        raise ValueError("a malformed layout")
    nbytes = span_bytes(shared.shape, shared.stride, dtype.itemsize)
    if shared.nbytes != nbytes or shared.offset < 0:
        raise ValueError(f"{shared.nbytes} bytes described for a layout that spans {nbytes}")
    if nbytes == 0:
        return torch.empty(shared.shape, dtype=dtype, device=device)
    if device.type == "cuda":
        with cuda_ipc.opened(shared.handle, shared.offset, nbytes, device) as raw:
            return raw.view(dtype).as_strided(shared.shape, shared.stride).clone(memory_format=torch.contiguous_format)
    if "/" in shared.handle or not shared.handle.startswith("out-"):
        raise ValueError(f"an output file outside the scratch folder: {shared.handle[:100]!r}")
    path = scratch / shared.handle
    try:
        data = bytearray(read_regular_file(path, nbytes))
    finally:
        path.unlink(missing_ok=True)
    if len(data) != nbytes:
        raise ValueError(f"{len(data)} bytes in {shared.handle}, {nbytes} described")
    if not hmac.compare_digest(hashlib.sha256(data).hexdigest(), shared.digest):
        raise ValueError(f"{shared.handle} changed after the worker shared it")
    return torch.frombuffer(data, dtype=torch.uint8).view(dtype).as_strided(shared.shape, shared.stride).contiguous()
