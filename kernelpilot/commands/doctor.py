"""`kernelpilot doctor`: what this machine can do, and for each problem how to fix it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import torch
from rich.console import Console
from rich.table import Table

from kernelpilot.harness import process_gate
from kernelpilot.harness.paths import cache_root
from kernelpilot.harness.sandbox import isolation_kind


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = False


def _version_line(cmd: list[str]) -> str | None:
    """The line of `cmd`'s output that names the version (nvcc says "release", most tools lead with it)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [line.strip() for line in (out.stdout + out.stderr).splitlines() if line.strip()]
    return next((line for line in lines if "release" in line), lines[0] if lines else None)


def check_gpu() -> Check:
    try:
        import pynvml

        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        names = [pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
        driver = pynvml.nvmlSystemGetDriverVersion()
        pynvml.nvmlShutdown()
        return Check("GPU", True, f"{', '.join(map(str, names))} (driver {driver})")
    except Exception as error:  # pynvml raises its own error types for every missing piece
        return Check("GPU", False, f"no NVIDIA GPU visible to NVML ({type(error).__name__})",
                     "install the NVIDIA driver, or use --device cpu to try kernelpilot with C++ kernels")


def check_torch_cuda() -> Check:
    if torch.cuda.is_available():
        return Check("torch CUDA", True, f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
                     f"{torch.cuda.get_device_name(0)}")
    return Check("torch CUDA", False, f"torch {torch.__version__} sees no CUDA device",
                 "install a CUDA build of torch (pip install torch --index-url https://download.pytorch.org/whl/cu130)")


def check_tool(name: str, version_cmd: list[str], fix: str, required: bool = False) -> Check:
    if shutil.which(name) is None:
        return Check(name, False, "not found on PATH", fix, required)
    return Check(name, True, _version_line(version_cmd) or "found", required=required)


def check_sandbox() -> Check:
    kind = isolation_kind()
    if kind == "bwrap":
        return Check("sandbox", True, "bubblewrap: read-only system, no network for candidates")
    if kind.startswith("unshare"):
        reach = "judge out of reach" if "+pid" in kind else "judge's process visible"
        files = "read-only system" if kind.endswith("+ro") else "files not read-only"
        complete = "+pid" in kind and kind.endswith("+ro")
        return Check("sandbox", True, f"{kind}: no network for candidates, {reach}, {files}",
                     "" if complete else "install bubblewrap (apt-get install bubblewrap) for full isolation")
    return Check("sandbox", False, "no isolation available: candidates run as plain subprocesses",
                 "install bubblewrap (apt-get install bubblewrap)")


def check_process_gate() -> Check:
    why_not = process_gate.probe()
    if why_not is None:
        return Check("process gate", True, "seccomp: candidates' process starts refused once their model is built")
    return Check("process gate", False, f"{why_not}: a candidate's helper processes are caught only when seen",
                 "a Linux kernel of 5.5 or later with seccomp (x86-64 or arm64)")


def check_cache() -> Check:
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        writable = os.access(root, os.W_OK)
    except OSError:
        writable = False
    if writable:
        return Check("cache", True, str(root))
    return Check("cache", False, f"{root} is not writable", "set KERNELPILOT_CACHE_DIR to a writable folder",
                 required=True)


CHECKS: list[Callable[[], Check]] = [
    check_gpu,
    check_torch_cuda,
    lambda: check_tool("nvcc", ["nvcc", "--version"], "install the CUDA toolkit (nvcc) to build CUDA kernels"),
    lambda: check_tool("ncu", ["ncu", "--version"], "optional: install Nsight Compute for bandwidth/occupancy"),
    lambda: check_tool("g++", ["g++", "--version"], "install g++ (apt-get install g++): the CPU backend and "
                       "torch.compile need it", required=True),
    check_sandbox,
    check_process_gate,
    check_cache,
]


def run(args) -> int:
    results = [check() for check in CHECKS]
    table = Table(box=None, show_header=False, padding=(0, 1))
    for result in results:
        mark = "[green]ok[/]" if result.ok else ("[red]error[/]" if result.required else "[yellow]missing[/]")
        fix = f"\n[dim]fix: {result.fix}[/]" if result.fix else ""
        table.add_row(mark, f"[bold]{result.name}[/]", f"{result.detail}{fix}")
    Console().print(table)
    return 1 if any(r.required and not r.ok for r in results) else 0
