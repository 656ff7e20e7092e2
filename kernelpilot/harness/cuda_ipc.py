"""CUDA IPC through the driver API (libcuda): how the worker shows the judge an output on the device without
a copy through the host.

torch's own sharing (`_share_cuda_`) also makes a reference-count file in /dev/shm, which the sandbox keeps
private; the driver's handle needs nothing but the device. The exporter keeps the memory alive until the
importer says it has copied it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
from collections.abc import Iterator

import torch

HANDLE_BYTES = 64
LAZY_ENABLE_PEER_ACCESS = 1


class CudaIpcError(RuntimeError):
    pass


class _Handle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * HANDLE_BYTES)]


@functools.cache
def _driver() -> ctypes.CDLL:
    return ctypes.CDLL("libcuda.so.1")


def _check(status: int, call: str) -> None:
    if status != 0:
        name = ctypes.c_char_p()
        _driver().cuGetErrorName(status, ctypes.byref(name))
        raise CudaIpcError(f"{call} failed: {(name.value or b'?').decode()} ({status})")


class DeviceBuffer:
    """Device memory of the harness's own, from the driver, apart from torch's caching allocator: no block the
    candidate's later calls are given was ever exported (an exported allocation stays marked for the life of
    the process), and the handle reaches this buffer alone. Freed once the importer has copied it."""

    def __init__(self, nbytes: int) -> None:
        pointer = ctypes.c_uint64()
        _check(_driver().cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1))), "cuMemAlloc")
        self.pointer, self.nbytes = pointer.value, nbytes

    def view(self, dtype: torch.dtype, shape: tuple[int, ...], stride: tuple[int, ...]) -> torch.Tensor:
        raw = torch.as_tensor(_DeviceBytes(self.pointer, self.nbytes), device="cuda")
        return raw.view(dtype).as_strided(shape, stride)

    def export(self) -> str:
        """The buffer's IPC handle, hex."""
        handle = _Handle()
        _check(_driver().cuIpcGetMemHandle(ctypes.byref(handle), ctypes.c_uint64(self.pointer)), "cuIpcGetMemHandle")
        return ctypes.string_at(ctypes.addressof(handle), HANDLE_BYTES).hex()

    def free(self) -> None:
        if self.pointer:
            _check(_driver().cuMemFree_v2(ctypes.c_uint64(self.pointer)), "cuMemFree")
            self.pointer = 0


class _DeviceBytes:
    """`__cuda_array_interface__` over raw device bytes, for `torch.as_tensor` to view without copying."""

    def __init__(self, pointer: int, nbytes: int) -> None:
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (pointer, False),
                                         "version": 3, "strides": None}


@contextlib.contextmanager
def opened(handle: str, offset: int, nbytes: int, device: torch.device) -> Iterator[torch.Tensor]:
    """The `nbytes` at `offset` in another process's exported allocation, as a uint8 tensor on `device`,
    mapped for the `with` block only: copy what is needed out of it inside."""
    raw = bytes.fromhex(handle)
    if len(raw) != HANDLE_BYTES:
        raise CudaIpcError("an IPC handle of the wrong size")
    with torch.cuda.device(device):
        torch.cuda.current_stream().synchronize()  # makes the device's context current for the driver
        pointer = ctypes.c_uint64()
        _check(_driver().cuIpcOpenMemHandle_v2(ctypes.byref(pointer), _Handle.from_buffer_copy(raw),
                                               LAZY_ENABLE_PEER_ACCESS), "cuIpcOpenMemHandle")
        try:
            yield torch.as_tensor(_DeviceBytes(pointer.value + offset, nbytes), device=device)
            torch.cuda.current_stream().synchronize()
        finally:
            _check(_driver().cuIpcCloseMemHandle(pointer), "cuIpcCloseMemHandle")
