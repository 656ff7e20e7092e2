"""GPU state from NVML: what the GPU panel shows, and whether other processes make timings unreliable."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

THROTTLE_NAMES = {
    0x1: "idle", 0x2: "app clocks", 0x4: "power cap", 0x8: "hw slowdown", 0x20: "sw thermal",
    0x40: "hw thermal", 0x80: "power brake", 0x100: "display clocks",
}


@dataclass(frozen=True)
class GpuSample:
    name: str
    utilisation_pct: int
    memory_used_mib: int
    memory_total_mib: int
    temperature_c: int
    sm_clock_mhz: int
    memory_clock_mhz: int
    throttle_reasons: tuple[str, ...]
    other_processes: tuple[int, ...]
    """PIDs computing on the GPU that are not this process or its children."""


def _our_pids() -> set[int]:
    """This process and its descendants (the harness's workers)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    ours, grew = {os.getpid()}, True
    while grew:
        children = {pid for pid, parent in parents.items() if parent in ours} - ours
        ours |= children
        grew = bool(children)
    return ours


def sample_gpu(index: int = 0) -> GpuSample | None:
    """One reading of GPU `index`, or None when there is no NVIDIA GPU or driver."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
        reasons = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)
        processes = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
        ours = _our_pids()
        return GpuSample(
            name=pynvml.nvmlDeviceGetName(handle),
            utilisation_pct=pynvml.nvmlDeviceGetUtilizationRates(handle).gpu,
            memory_used_mib=memory.used >> 20,
            memory_total_mib=memory.total >> 20,
            temperature_c=pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU),
            sm_clock_mhz=pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
            memory_clock_mhz=pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
            throttle_reasons=tuple(name for bit, name in THROTTLE_NAMES.items() if reasons & bit and bit != 0x1),
            other_processes=tuple(p.pid for p in processes if p.pid not in ours),
        )
    except Exception:
        return None
    finally:
        pynvml.nvmlShutdown()
