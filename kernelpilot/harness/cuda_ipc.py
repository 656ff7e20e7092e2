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


def export(pointer: int, nbytes: int) -> tuple[str, int]:
    """(the handle of the allocation that holds `nbytes` from device address `pointer`, hex; the pointer's
    offset in it). Raises CudaIpcError where the driver will not share the memory (a pool's, a virtual
    mapping's)."""
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(_driver().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(pointer)),
           "cuMemGetAddressRange")
    if pointer + nbytes > base.value + size.value:
        raise CudaIpcError("the tensor reaches past its allocation")
    handle = _Handle()
    _check(_driver().cuIpcGetMemHandle(ctypes.byref(handle), base), "cuIpcGetMemHandle")
    return ctypes.string_at(ctypes.addressof(handle), HANDLE_BYTES).hex(), pointer - base.value


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
