"""Fast builds of a workspace's `kernels/`: one object per source file, cached by content, linked into one `.so`.

Why not `load_inline`: it compiles torch's headers into every rebuild (53–61 s cold on an H200).
Kernel sources here include no torch header; they export `extern "C"` launchers that
`harness.kernels` calls through ctypes, so the "binding" is never compiled at all. A changed
kernel costs one `nvcc -c` of that file plus a link; unchanged files come from the cache, and
independent files compile in parallel.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.harness.paths import cache_dir, find_cached

CUDA_SOURCES = (".cu",)
HOST_SOURCES = (".cpp", ".cc", ".c")
HEADERS = (".h", ".hpp", ".cuh", ".inc")
LIBRARY_PREFIX = "kernels-"
"""A built `kernels/` library's file name begins so: the judge holds it to a kernel library's rules (`linked`)."""

LogSink = Callable[[str], None]


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    library: Path | None
    log: str
    seconds: float
    compiled: tuple[str, ...] = ()
    """Sources that were compiled (the rest came from the cache)."""


def backend_of(kernels_dir: Path) -> str:
    """`cuda` when the workspace has any `.cu` source, else `cpu`."""
    return "cuda" if any(kernels_dir.glob("*.cu")) else "cpu"


def sources_of(kernels_dir: Path) -> list[Path]:
    return sorted(p for p in kernels_dir.iterdir() if p.suffix in CUDA_SOURCES + HOST_SOURCES and p.is_file())


@functools.cache
def _tool_version(tool: str) -> str:
    try:
        return subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


@functools.cache
def cuda_arch() -> str:
    """The arch to build for: `KERNELPILOT_CUDA_ARCH`, else the local GPU's, else Hopper."""
    if arch := os.environ.get("KERNELPILOT_CUDA_ARCH"):
        return arch
    import torch

    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}{'a' if major == 9 else ''}"
    return "sm_90a"


def compile_command(source: Path, obj: Path, backend: str) -> list[str]:
    if backend == "cuda":
        return ["nvcc", "-O3", "-std=c++17", "-lineinfo", "-Xcompiler", "-fPIC", f"-arch={cuda_arch()}",
                "-c", str(source), "-o", str(obj)]
    return ["g++", "-O3", "-march=native", "-fPIC", "-std=c++17", "-fopenmp", "-c", str(source), "-o", str(obj)]


def link_command(objects: list[Path], library: Path, backend: str, libraries: list[str]) -> list[str]:
    if backend == "cuda":
        return ["nvcc", "-shared", *map(str, objects), "-o", str(library), *(f"-l{lib}" for lib in libraries)]
    return ["g++", "-shared", "-fopenmp", *map(str, objects), "-o", str(library)]


LIBRARIES_BY_HEADER = {"cublas": "cublas", "cublasLt": "cublasLt", "cudnn": "cudnn"}
"""Libraries a kernel may call (GEMM and convolution), linked when a source includes their header."""


def linked_libraries(sources: list[Path]) -> list[str]:
    text = "".join(s.read_text(errors="replace") for s in sources)
    return sorted(lib for header, lib in LIBRARIES_BY_HEADER.items() if f"<{header}" in text or f'"{header}' in text)


def _digest(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:24]


def _run(cmd: list[str], cwd: Path, timeout_s: float) -> tuple[int, str]:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=timeout_s)
    except FileNotFoundError:
        return 127, f"{cmd[0]}: not found (is it installed and on PATH? `kernelpilot doctor` checks)"
    except subprocess.TimeoutExpired:
        return 124, f"{cmd[0]} took longer than {timeout_s:.0f} s"
    return proc.returncode, (proc.stdout + proc.stderr)


def build_kernels(kernels_dir: Path, backend: str, on_log: LogSink | None = None,
                  timeout_s: float = 900.0) -> BuildResult:
    """Build `kernels_dir` for `backend`; compiler messages are verbatim, with `kernels/<file>:<line>`."""
    started = time.perf_counter()
    log_lines: list[str] = []

    def log(text: str) -> None:
        for line in text.splitlines():
            log_lines.append(line)
            if on_log:
                on_log(line)

    def finish(ok: bool, library: Path | None, compiled: tuple[str, ...] = ()) -> BuildResult:
        return BuildResult(ok, library, "\n".join(log_lines), time.perf_counter() - started, compiled)

    kernels_dir = kernels_dir.resolve()
    sources = sources_of(kernels_dir) if kernels_dir.is_dir() else []
    if not sources:
        log(f"no kernel sources in {kernels_dir.name}/ (expected *.cu or *.cpp)")
        return finish(False, None)
    if backend == "cpu" and any(s.suffix in CUDA_SOURCES for s in sources):
        log("kernels/ holds CUDA sources (.cu): evaluate with --device cuda")
        return finish(False, None)
    compiler = "nvcc" if backend == "cuda" else "g++"
    if shutil.which(compiler) is None:
        log(f"{compiler}: not found on PATH (`kernelpilot doctor` says how to install it)")
        return finish(False, None)

    headers = b"".join(p.name.encode() + p.read_bytes() for p in sorted(kernels_dir.iterdir()) if p.suffix in HEADERS)
    objects_dir = cache_dir("build") / "objects"
    objects_dir.mkdir(parents=True, exist_ok=True)
    workspace = kernels_dir.parent
    toolchain = _tool_version(compiler)

    def object_for(source: Path) -> tuple[Path, list[str]]:
        cmd = compile_command(source.relative_to(workspace), Path("OBJ"), backend)
        key = _digest(" ".join(cmd), toolchain, source.name, source.read_bytes(), headers)
        return objects_dir / f"{source.stem}-{key}.o", cmd

    plan = [(source, find_cached("build/objects", obj.name) or obj, cmd)
            for source, (obj, cmd) in ((source, object_for(source)) for source in sources)]
    stale = [(s, o, c) for s, o, c in plan if not o.exists()]
    for source, _, _ in plan:
        log(f"{'compile' if any(s == source for s, _, _ in stale) else 'cached '}  {source.relative_to(workspace)}")

    def compile_one(item: tuple[Path, Path, list[str]]) -> tuple[Path, int, str]:
        source, obj, cmd = item
        with tempfile.TemporaryDirectory(dir=objects_dir) as tmp:
            tmp_obj = Path(tmp) / obj.name
            code, output = _run([tmp_obj.as_posix() if part == "OBJ" else part for part in cmd], workspace, timeout_s)
            if code == 0:
                os.replace(tmp_obj, obj)
        return source, code, output

    failed = False
    with ThreadPoolExecutor(max_workers=max(1, min(len(stale), os.cpu_count() or 1))) as pool:
        for source, code, output in pool.map(compile_one, stale):
            if output.strip():
                log(output.rstrip())
            failed |= code != 0
    compiled = tuple(str(s.relative_to(workspace)) for s, _, _ in stale)
    if failed:
        log("build failed")
        return finish(False, None, compiled)

    objects = [o for _, o, _ in plan]
    libraries = linked_libraries(sources)
    library_name = f"{LIBRARY_PREFIX}{_digest(*(o.name for o in objects), *libraries)}.so"
    library = find_cached("build/lib", library_name) or cache_dir("build") / "lib" / library_name
    if not library.exists():
        library.parent.mkdir(parents=True, exist_ok=True)
        tmp_lib = library.with_suffix(f".{os.getpid()}.tmp.so")
        code, output = _run(link_command(objects, tmp_lib, backend, libraries), workspace, timeout_s)
        if output.strip():
            log(output.rstrip())
        if code != 0:
            log("link failed")
            return finish(False, None, compiled)
        os.replace(tmp_lib, library)
    log(f"built {library.name} in {time.perf_counter() - started:.2f} s")
    return finish(True, library, compiled)
