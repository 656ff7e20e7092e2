"""The kernel loader a single file carries out of kernelpilot: torch alone, no kernelpilot import.

`harness.kernels` builds through the harness's object cache and counts launches for its guards; a file
accepted into a project or exported runs where kernelpilot may not be installed, so `session.accept`
embeds this module's code (all below this docstring) in the file instead. The launcher grammar below is
the one `harness.kernels` parses with. The calling convention is the
harness's: every `extern "C"` function returning void or int is a launcher, tensors pass as pointers, a
trailing `cudaStream_t` is filled with the current stream when omitted, a non-zero int return is an error.
Sources with a `.cu` file build with nvcc for the local GPU (`KERNELPILOT_CUDA_ARCH` overrides), others
with g++ and OpenMP, once per content, where torch builds its own extensions (`$TORCH_EXTENSIONS_DIR`: a
sandbox such as kernelpilot's evaluation gives that folder, and no home), else in `$XDG_CACHE_HOME` or `~/.cache`,
under `kernelpilot-standalone/`.
"""

import ctypes
import hashlib
import os
import re
import subprocess
import types
from pathlib import Path

import torch

KERNEL_SCALARS = {
    "int": ctypes.c_int32, "int32_t": ctypes.c_int32, "unsigned": ctypes.c_uint32,
    "unsigned int": ctypes.c_uint32, "uint32_t": ctypes.c_uint32,
    "long": ctypes.c_int64, "long long": ctypes.c_int64, "int64_t": ctypes.c_int64,
    "ptrdiff_t": ctypes.c_int64, "size_t": ctypes.c_uint64, "uint64_t": ctypes.c_uint64,
    "unsigned long": ctypes.c_uint64, "unsigned long long": ctypes.c_uint64,
    "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
}
KERNEL_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")
KERNEL_LAUNCHER = re.compile(
    r'extern\s+"C"\s+(?:__host__\s+|__attribute__\s*\(\([^)]*\)\)\s+)*(void|int)\s+(\w+)\s*\(([^)]*)\)\s*\{'
)
KERNEL_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_KERNEL_LIBRARIES = ("cublas", "cublasLt", "cudnn")


def _kernel_param_type(text):
    """`pointer`, `stream` or the scalar's C type, for one launcher parameter's declaration."""
    text = " ".join(KERNEL_QUALIFIERS.sub(" ", text).split())
    if "*" in text:
        return "pointer"
    type_name = " ".join(text.split()[:-1]) or text
    if type_name == "cudaStream_t":
        return "stream"
    if type_name not in KERNEL_SCALARS:
        raise TypeError(f"unsupported launcher parameter type '{type_name}'")
    return type_name


def _kernel_library(sources):
    """Build `sources` ({file name: code}) into one shared library, cached by content; returns its path."""
    cuda = any(name.endswith(".cu") for name in sources)
    if cuda:
        major, minor = torch.cuda.get_device_capability()
        arch = os.environ.get("KERNELPILOT_CUDA_ARCH") or f"sm_{major}{minor}{'a' if major == 9 else ''}"
        code = "".join(sources.values())
        linked = [f"-l{lib}" for lib in _KERNEL_LIBRARIES if f"<{lib}" in code or f'"{lib}' in code]
        command = ["nvcc", "-O3", "-std=c++17", "-Xcompiler", "-fPIC", f"-arch={arch}", "-shared"]
    else:
        linked = []
        command = ["g++", "-O3", "-march=native", "-fPIC", "-std=c++17", "-fopenmp", "-shared"]
    key = hashlib.sha256(repr((sorted(sources.items()), command)).encode()).hexdigest()[:24]
    cache = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or os.environ.get("XDG_CACHE_HOME")
                 or Path.home() / ".cache")
    folder = cache / "kernelpilot-standalone" / key
    library = folder / "kernels.so"
    if library.exists():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    for name, code in sources.items():
        (folder / Path(name).name).write_text(code)
    compiled = [str(folder / Path(name).name) for name in sorted(sources)
                if name.endswith((".cu", ".cpp", ".cc", ".c"))]
    partial = folder / f"kernels.{os.getpid()}.so"
    built = subprocess.run([*command, *compiled, "-o", str(partial), *linked], capture_output=True, text=True,
                           check=False)
    if built.returncode != 0:
        raise RuntimeError(f"building the kernels failed:\n{built.stdout}{built.stderr}")
    os.replace(partial, library)
    return library


def _kernel_launcher(function, name, returns, kinds):
    function.argtypes = [ctypes.c_void_p if kind in ("pointer", "stream") else KERNEL_SCALARS[kind] for kind in kinds]
    function.restype = ctypes.c_int if returns == "int" else None
    appends_stream = bool(kinds) and kinds[-1] == "stream"

    def launch(*args):
        if appends_stream and len(args) == len(kinds) - 1:
            args = (*args, torch.cuda.current_stream().cuda_stream)
        if len(args) != len(kinds):
            raise TypeError(f"{name}() takes {len(kinds)} arguments, got {len(args)}")
        status = function(*(arg.data_ptr() if isinstance(arg, torch.Tensor) else arg for arg in args))
        if status:
            raise RuntimeError(f"{name} returned error code {status}")

    launch.__name__ = name
    return launch


def load_kernel_sources(sources):
    """The launchers of `sources` ({file name: code}), as attributes of the returned namespace."""
    handle = ctypes.CDLL(str(_kernel_library(sources)))
    launchers = {}
    for code in sources.values():
        for returns, name, params in KERNEL_LAUNCHER.findall(KERNEL_COMMENTS.sub("", code)):
            kinds = [_kernel_param_type(p) for p in (s.strip() for s in params.split(",")) if p and p != "void"]
            launchers[name] = _kernel_launcher(getattr(handle, name), name, returns, kinds)
    return types.SimpleNamespace(**launchers)
