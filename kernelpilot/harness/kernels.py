"""The documented import through which `model_new.py` calls its own kernels.

    from pathlib import Path
    from kernelpilot.harness.kernels import load_kernels

    ops = load_kernels(Path(__file__).parent / "kernels")
    ...
    ops.relu_add(x, bias, out, x.numel())   # tensors pass as pointers, the stream is appended

Every `extern "C"` function (returning `void` or `int`) in `kernels/*.cu|*.cpp` becomes a
launcher. Parameters may be pointers (pass a tensor, or None), integers, `float`, `double`,
`bool`, and a trailing `cudaStream_t` that is filled with the current stream when omitted.
A launcher returning `int` signals failure with a non-zero value. Launch counts are recorded so
the harness can tell a kernel that is written but never run.
"""

from __future__ import annotations

import ctypes
import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

from kernelpilot.harness.build import backend_of, build_kernels, sources_of
from kernelpilot.harness.paths import cache_dir
from kernelpilot.harness.standalone_kernels import KERNEL_COMMENTS, KERNEL_LAUNCHER, KERNEL_QUALIFIERS, KERNEL_SCALARS

launch_counts: Counter[str] = Counter()
"""Calls per launcher name since the process started (read by the harness's guards)."""

profiling = False
"""Set by the harness while it profiles, so each launcher shows up as a named range."""

class KernelSignatureError(RuntimeError):
    """A launcher signature that cannot be called through ctypes."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    """`pointer`, `stream`, or a scalar C type name."""


@dataclass(frozen=True)
class Signature:
    name: str
    returns: str
    params: tuple[Param, ...]
    source: str


def _param(text: str, launcher: str, source: str) -> Param:
    text = " ".join(KERNEL_QUALIFIERS.sub(" ", text).split())
    if "*" in text:
        return Param(text.rsplit("*", 1)[1].strip() or "ptr", "pointer")
    words = text.split()
    type_name, name = (" ".join(words[:-1]), words[-1]) if len(words) > 1 else (text, "arg")
    if type_name == "cudaStream_t":
        return Param(name, "stream")
    if type_name not in KERNEL_SCALARS:
        raise KernelSignatureError(
            f"{source}: launcher {launcher}: unsupported parameter type '{type_name}' "
            "(use pointers, integers, float, double, bool or cudaStream_t)"
        )
    return Param(name, type_name)


def parse_launchers(source: Path) -> list[Signature]:
    code = KERNEL_COMMENTS.sub("", source.read_text(errors="replace"))
    signatures = []
    for returns, name, params in KERNEL_LAUNCHER.findall(code):
        parts = [p for p in (s.strip() for s in params.split(",")) if p and p != "void"]
        signatures.append(Signature(name, returns, tuple(_param(p, name, source.name) for p in parts), source.name))
    return signatures


class Launcher:
    """Calls one `extern "C"` function with tensors passed as device pointers."""

    def __init__(self, function: ctypes._CFuncPtr, signature: Signature, backend: str) -> None:
        self._function = function
        self.signature = signature
        self._backend = backend
        self._argtypes = [ctypes.c_void_p if p.kind in ("pointer", "stream") else KERNEL_SCALARS[p.kind]
                          for p in signature.params]
        function.argtypes = self._argtypes
        function.restype = ctypes.c_int if signature.returns == "int" else None
        self._appends_stream = bool(signature.params) and signature.params[-1].kind == "stream"
        self._on_backend = _ON_DEVICE[backend]

    def __call__(self, *args):
        params = self.signature.params
        if self._appends_stream and len(args) == len(params) - 1:
            args = (*args, torch._C._cuda_getCurrentRawStream(torch.cuda.current_device()))
        if len(args) != len(params):
            raise TypeError(f"{self.signature.name}() takes {len(params)} arguments "
                            f"({', '.join(p.name for p in params)}), got {len(args)}")
        converted = [self._convert(arg, param) for arg, param in zip(args, params)]
        launch_counts[self.signature.name] += 1
        if profiling:
            with torch.profiler.record_function(f"kernelpilot::{self.signature.name}"):
                status = self._function(*converted)
        else:
            status = self._function(*converted)
        if status:
            raise RuntimeError(f"{self.signature.name} returned error code {status}")

    def _convert(self, arg, param: Param):
        if isinstance(arg, torch.Tensor):
            if param.kind != "pointer":
                raise TypeError(f"{self.signature.name}: parameter '{param.name}' is not a pointer but got a tensor")
            if not self._on_backend(arg):  # not arg.device.type: a device object per tensor per launch
                raise TypeError(f"{self.signature.name}: '{param.name}' is on {arg.device}, "
                                f"the kernels are built for {self._backend}")
            return arg.data_ptr()
        return arg


_ON_DEVICE = {"cuda": lambda t: t.is_cuda, "cpu": lambda t: t.is_cpu}


class KernelLibrary:
    """The launchers of one built `kernels/` folder, as attributes."""

    def __init__(self, path: Path, signatures: list[Signature], backend: str) -> None:
        self.path = path
        self.backend = backend
        handle = ctypes.CDLL(str(path))
        self.launchers = {s.name: Launcher(getattr(handle, s.name), s, backend) for s in signatures}

    def __getattr__(self, name: str) -> Launcher:
        try:
            return self.__dict__["launchers"][name]
        except KeyError:
            raise AttributeError(f"no launcher '{name}' in {self.path.name}; "
                                 f"have: {', '.join(self.__dict__.get('launchers', {})) or 'none'}") from None


class KernelBuildError(RuntimeError):
    def __init__(self, log: str) -> None:
        super().__init__(log)
        self.log = log


_loaded: dict[Path, KernelLibrary] = {}


def declared_launchers(kernels_dir: Path) -> list[Signature]:
    return [s for source in sources_of(kernels_dir) for s in parse_launchers(source)]


def load_kernels(kernels_dir: str | Path) -> KernelLibrary:
    """Build (cached by content) and load `kernels_dir`; raises `KernelBuildError` with the compiler log."""
    kernels_dir = Path(kernels_dir).resolve()
    backend = backend_of(kernels_dir)
    result = build_kernels(kernels_dir, backend)
    if not result.ok:
        raise KernelBuildError(result.log)
    if result.library not in _loaded:
        _loaded[result.library] = KernelLibrary(result.library, declared_launchers(kernels_dir), backend)
    return _loaded[result.library]


def load_kernel_sources(sources: dict[str, str]) -> KernelLibrary:
    """Like `load_kernels`, for sources embedded in a single-file candidate ({file name: code})."""
    key = hashlib.sha256(repr(sorted(sources.items())).encode()).hexdigest()[:24]
    kernels_dir = cache_dir("embedded") / key / "kernels"
    if not kernels_dir.is_dir():
        kernels_dir.mkdir(parents=True, exist_ok=True)
        for name, code in sources.items():
            (kernels_dir / Path(name).name).write_text(code)
    return load_kernels(kernels_dir)
