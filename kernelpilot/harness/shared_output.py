"""A candidate's output on its way to the judge, without a trip through the message channel: on CUDA the
driver's IPC handle of the device memory that holds it, on the CPU a file in the worker's scratch folder.

The worker shares a snapshot it took on the stream forward ran on (`Snapshot`), and keeps it until the judge
has copied it (`copied`): what the judge compares is the judge's own copy, which no code of the candidate's
can reach.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import torch

from kernelpilot.harness import cuda_ipc, guards


@contextlib.contextmanager
def opened_regular_file(path: Path, max_bytes: int | None) -> Iterator[BinaryIO]:
    """A plain file of at most `max_bytes`, opened never following a link nor blocking: a FIFO, a link to
    /dev/zero or a sparse terabyte that the candidate's code names on the pipe would stall, flood or exhaust
    the judge."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path.name} is not a plain file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise OSError(f"{path.name} holds {info.st_size} bytes, more than any message of this task ({max_bytes})")
        with os.fdopen(fd, "rb", closefd=False) as file:
            yield file
    finally:
        os.close(fd)


def read_regular_file(path: Path, max_bytes: int | None) -> bytes:
    with opened_regular_file(path, max_bytes) as file:
        return file.read(max_bytes + 1 if max_bytes is not None else -1)


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
    """An output's values as forward left them, out of the candidate's reach, and how the judge finds them."""

    shared: SharedOutput
    tensor: torch.Tensor | None = None
    """On CUDA: the copy, in memory of the harness's own."""
    buffer: cuda_ipc.DeviceBuffer | None = None
    """On CUDA: the driver's memory the copy lies in."""

    def release(self) -> None:
        if self.buffer is not None:
            self.buffer.free()


WRITE_CHUNK = 1 << 22


def write_once(data: memoryview, file: Path) -> str:
    """`data` written to a new `file`, and the SHA-256 of what was written. Each chunk is read once, into a
    copy that both the file and the digest take: a thread of the candidate's changing the values meanwhile
    cannot make them disagree with each other."""
    digest = hashlib.sha256()
    with open(file, "xb") as out:  # never through a link planted at the name
        for start in range(0, len(data), WRITE_CHUNK):
            chunk = bytes(data[start:start + WRITE_CHUNK])
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


def take_snapshot(output: torch.Tensor, file: Path) -> Snapshot:
    """`output`'s values now, shared with the judge. On the CPU they are written at once to `file` in the
    worker's scratch folder (a copy in memory first would cost a 256 MB output its page faults once more).
    On CUDA they are copied in the same layout (contiguous where elements share memory, as a broadcast's do),
    queued on the current stream: work the candidate left running on another stream is not waited for."""
    dense = guards.is_dense(output)
    dtype = str(output.dtype).removeprefix("torch.")
    if not output.is_cuda:
        tensor = output.detach().resolve_conj().resolve_neg()  # a lazily negated view's bytes are not its values
        tensor = tensor if dense else tensor.clone(memory_format=torch.contiguous_format)
        shape, stride = tuple(tensor.shape), tuple(tensor.stride())
        nbytes = span_bytes(shape, stride, tensor.element_size())
        storage = torch.empty(0, dtype=torch.uint8).set_(tensor.untyped_storage())
        offset = tensor.storage_offset() * tensor.element_size()
        digest = write_once(memoryview(storage[offset:offset + nbytes].numpy()), file)
        return Snapshot(SharedOutput(file.name, 0, nbytes, shape, stride, dtype, digest))
    stride = tuple(output.stride()) if dense else torch.empty(output.shape, device="meta").stride()
    nbytes = span_bytes(tuple(output.shape), stride, output.element_size())
    buffer = cuda_ipc.DeviceBuffer(nbytes)
    view = buffer.view(output.dtype, tuple(output.shape), stride)
    view.copy_(output.detach())
    shared = SharedOutput(buffer.export() if nbytes else "", 0, nbytes, tuple(output.shape), stride, dtype)
    return Snapshot(shared, view, buffer)


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
    data = torch.empty(nbytes, dtype=torch.uint8)  # read straight into the judge's tensor: outputs can be gigabytes
    try:
        with opened_regular_file(path, nbytes) as file:
            read = file.readinto(data.numpy())
    finally:
        path.unlink(missing_ok=True)
    if read != nbytes:
        raise ValueError(f"{read} bytes in {shared.handle}, {nbytes} described")
    if not hmac.compare_digest(hashlib.sha256(data.numpy()).hexdigest(), shared.digest):
        raise ValueError(f"{shared.handle} changed after the worker shared it")
    return data.view(dtype).as_strided(shared.shape, shared.stride).contiguous()
