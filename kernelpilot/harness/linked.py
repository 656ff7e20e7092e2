"""What the candidate's compiled code calls, read by the parent from the worker's memory map.

The source scan (`guards.tamper_findings`) reads `at::cpu::add(x, b)`, not `namespace k = at::cpu;
k::add(x, b)` nor a name pasted together by a macro. The linker cannot be talked round that way: a call
into a library the candidate did not build is an undefined symbol of its shared object, named in full.
So the parent lists the shared objects mapped into the worker's processes (a mapping cannot be hidden
from /proc), leaves out those of the Python installation and the system, and reads the undefined
symbols of the rest with `nm`.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import site
import subprocess
import sys
from pathlib import Path

from kernelpilot.harness.build import LIBRARY_PREFIX
from kernelpilot.harness.guards import BELOW_DISPATCHER, BLAS_DIRECT, OPERATOR_CALLBACK, REDISPATCH

LINKED_PATTERNS = {
    r"^at::(cpu|native|meta|composite\w*)::|^at::cuda::(?!warp_size\b)[a-z][a-z0-9_]*[(<]": BELOW_DISPATCHER,
    r"^at::_ops::\w+::redispatch\(": REDISPATCH,
    r"^at::(add(Global|ThreadLocal)Callback|RecordFunctionCallback::)": OPERATOR_CALLBACK,
    r"^(cblas_|mkl_|dnnl_)|^[sdcz]gemm_?$": BLAS_DIRECT,
    r"^(PyEval_GetFrame\w*|PyEval_Get(Locals|Globals)|_?PyThreadState_GetFrame|"
    r"PyFrame_(?!(GetBack|GetCode|GetLineNumber)$)\w+|_PyFrame_\w+|PyGC_\w+|PyUnstable_\w+|_PyEval_\w+|"
    r"PyEval_Set(Profile|Trace)\w*|_?PySys_\w+|PyFunction_Set\w+|PyCode_\w+|_PyInterpreterState_\w+)$":
        "reaches Python's frames, code or hooks from compiled code (the harness's timing samples, audit records "
        "and channel live there)",
    r"^(process_vm_writev|process_vm_readv|ptrace)$":
        "reads or writes the process's memory behind its code's back (a clock or the harness rewritten)",
}
"""Undefined symbols (demangled, version suffix removed) that a kernel of the candidate's own never needs, in
any library, Python extensions included: pybind11 itself needs only the frame functions left out above
(`PyFrame_GetBack`, `GetCode`, `GetLineNumber`, for its error messages). Not `dlsym`: the CUDA runtime that
nvcc links in statically looks up the driver with it."""

KERNEL_LIBRARY_PATTERNS = {
    r"^_?Py": "calls Python's C API from a kernel library (reaching the interpreter's objects: a clock, a frame)",
}
"""Also for a plain kernel library: one the harness built from `kernels/` (`build.LIBRARY_PREFIX`), loaded with
ctypes, a `PyInit_` of its own notwithstanding (red team 31's dummy), or any without `PyInit_` (not a Python
extension, whose bindings use the C API)."""

HOST_CODE_PATTERNS = {
    r"^(mprotect|pkey_mprotect|mremap|sigaction|signal|sigset|dl_iterate_phdr|getauxval|dladdr1?|dlinfo|syscall)$":
        "changes memory protection or signal handling, or walks the loaded code (a clock rewritten in libc or "
        "a GOT, work faulted in after the clock stopped)",
}
"""Also for a library without device code: the CUDA runtime that nvcc links in statically uses these."""

NM_LINE = re.compile(r"^\s*(?:[0-9a-f]+\s+)?([A-Za-z])\s+(.+)$")
"""One line of `nm -D`: an address for defined symbols, the symbol's kind letter, its (demangled) name."""

MAX_LIBRARY_BYTES = 1 << 30
"""Larger than any kernel library: a file the candidate maps that the judge will not read (a sparse terabyte)."""

SYSTEM_ROOTS = ("/usr/", "/lib/", "/lib32/", "/lib64/", "/opt/nvidia/")


@functools.cache
def installed_roots() -> tuple[str, ...]:
    """Folders of libraries the candidate did not build: the interpreter's, its packages' and the system's."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, site.getusersitepackages(), *site.getsitepackages()}
    folders = {Path(root).resolve() for root in roots} - {Path("/")}  # an interpreter installed at / vouches for nothing
    return tuple(f"{folder}/" for folder in folders) + SYSTEM_ROOTS


def mapped_libraries(pids: list[int]) -> dict[str, str]:
    """Executable file mappings of `pids` outside the installed roots: path → where the parent reads it.

    The path is the one the process sees (its mount namespace may differ), so the file is read through
    `/proc/PID/root`, or through `/proc/PID/map_files` when it was deleted after it was loaded.
    """
    found: dict[str, str] = {}
    for pid in pids:
        try:
            lines = Path(f"/proc/{pid}/maps").read_text().splitlines()
        except OSError:  # gone meanwhile
            continue
        for line in lines:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or "x" not in fields[1] or not fields[5].startswith("/"):
                continue
            path = fields[5].removesuffix(" (deleted)")
            if path.startswith(installed_roots()) or path in found:
                continue
            through_root = f"/proc/{pid}/root{path}"
            found[path] = through_root if Path(through_root).is_file() else f"/proc/{pid}/map_files/{fields[0]}"
    return found


def linked_findings(path: str, readable: str) -> tuple[str, ...]:
    """The undefined symbols of one shared object that call what the candidate must not, with why."""
    try:
        identity = os.stat(readable)
    except OSError as error:
        return (f"{path}: mapped, but cannot be read ({error.strerror})",)
    if identity.st_size > MAX_LIBRARY_BYTES:
        return (f"{path}: mapped executable, {identity.st_size} bytes: larger than any kernel library, not read",)
    return _symbol_findings(path, readable, (identity.st_dev, identity.st_ino, identity.st_size, identity.st_mtime_ns))


def _tool_output(*cmd: str) -> tuple[int, str, str]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TOOL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, "", f"{Path(cmd[0]).name} took longer than {TOOL_TIMEOUT_S} s"
    return done.returncode, done.stdout, done.stderr


TOOL_TIMEOUT_S = 60


@functools.cache
def _symbol_findings(path: str, readable: str, identity: tuple[int, ...]) -> tuple[str, ...]:
    """Cached by the file's identity: an agent's session rebuilds the same extension name many times."""
    nm, readelf = shutil.which("nm"), shutil.which("readelf")
    if nm is None or readelf is None:
        return (f"{path}: its symbols cannot be read (no nm or readelf on PATH: install binutils)",)
    code, listing, errors = _tool_output(nm, "-D", "--demangle", readable)
    if code != 0:
        return () if "file format not recognized" in errors else (f"{path}: {errors.strip()[:200]}",)
    symbols = [match.groups() for line in listing.splitlines() if (match := NM_LINE.match(line))]
    undefined = [name.split("@")[0] for kind, name in symbols if kind in "Uw"]
    patterns = dict(LINKED_PATTERNS)
    if Path(path).name.startswith(LIBRARY_PREFIX) or \
            not any(name.startswith("PyInit_") for kind, name in symbols if kind not in "Uw"):
        patterns |= KERNEL_LIBRARY_PATTERNS
    if ".nv_fatbin" not in _tool_output(readelf, "-S", "-W", readable)[1]:  # section headers only
        patterns |= HOST_CODE_PATTERNS
    return tuple(f"{Path(path).name} links {symbol}: {why}" for symbol in undefined
                 for pattern, why in patterns.items() if re.search(pattern, symbol))
