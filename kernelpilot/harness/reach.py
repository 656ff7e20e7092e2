"""The candidate's reaches into the worker's frames and memory, seen at run time through Python's audit
events (PEP 578).

The static scan (`guards.tamper_findings`) sees `sys._getframe`, not `getattr(sys, "_get" + "frame")`.
A harness frame reached from the candidate exposes the timing samples and the channel's key; the garbage
collector's object lists and ctypes' raw reads reach the same objects. An audit hook cannot be removed
once added, and sees these however they are named. The worker adds one before it imports the candidate;
it reports a reach at once, before the caller gets its frame or object back, when the code that asked is
the candidate's, code it exec'd, or a library function that hands what it reached back to its caller
(`inspect.currentframe`, `traceback.walk_tb`, `ctypes.string_at`…) called from outside its module,
with the candidate's code on the stack. Other library code that looks at its own caller for bookkeeping
(logging's `findCaller`, typing, torch) hands nothing back and is not the candidate asking.

Not seen here: memory read through ctypes pointers made from an integer (`memmove`, `cast`,
`c_char_p(address).value` raise no event) and C++ that calls Python's C API; the static scan looks for
those it can name.
"""

from __future__ import annotations

import os
import re
import site
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import torch

from kernelpilot.harness.linked import installed_roots

EVENTS = frozenset({
    "sys._getframe", "sys._getframemodulename", "sys._current_frames", "sys._current_exceptions",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "ctypes.string_at", "ctypes.wstring_at", "ctypes.cdata",
})
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
HANDS_BACK = {
    ("inspect.py", name) for name in ("currentframe", "stack", "trace", "getouterframes", "getinnerframes")
} | {("traceback.py", "walk_stack"), ("traceback.py", "walk_tb"), ("bdb.py", "set_trace"),
     (os.path.join("logging", "__init__.py"), "<lambda>"), (os.path.join("logging", "__init__.py"), "currentframe")
} | {(module, name) for module in ("profile.py", "cProfile.py") for name in ("run", "runctx", "runcall")
} | {(os.path.join("ctypes", "__init__.py"), name)
     for name in ("string_at", "wstring_at", "__getattr__", "__getitem__", "__init__", "LoadLibrary")}
"""Library functions whose caller gets back what they reach: frames, a hook that will be handed frames,
raw memory, a library or a function in it."""
LIBRARY_FUNCTIONS = re.compile(r"_?Py|(?i:cblas_|[sdcz]gemm|mkl_|dnnl_|_ZN2at)")
"""Functions looked up through ctypes that are the interpreter's (its C API: frames and all), a BLAS's or
ATen's: compute no audit sees, however the name is spelled (MKL answers to `SGEMM` too)."""


def _installed_library(name: object) -> bool:
    """A library ctypes is asked to load that the candidate did not build: the process itself (None), one
    found on the system's search path (a bare name) or one in the installation's folders."""
    return name is None or os.sep not in str(name) or os.path.realpath(str(name)).startswith(installed_roots())


def reached(event: str, args: tuple) -> str | None:
    """The audit event named as a reach, or None when it is not one."""
    if event in EVENTS:
        return event
    if event == "object.__getattr__" and args[1] in FRAME_ATTRIBUTES:
        return f"{type(args[0]).__name__}.{args[1]}"
    if event in ("ctypes.dlsym", "ctypes.dlsym/handle") and isinstance(args[1], str) \
            and LIBRARY_FUNCTIONS.match(args[1]):
        return f"ctypes lookup of {args[1]}"
    if event == "ctypes.dlopen" and _installed_library(args[0]):
        return f"ctypes load of {args[0] or 'the process itself'} (a library the candidate did not build)"
    return None


def _folders(*paths: str) -> tuple[str, ...]:
    """Path prefixes, as given and resolved, each ending in a separator."""
    return tuple({os.path.join(form, "") for path in paths for form in (path, os.path.realpath(path))})


def library_folders() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Where the standard library, and installed packages with PyTorch and the harness, live: never the
    candidate's code."""
    paths = sysconfig.get_paths()
    packages = _folders(paths["purelib"], paths["platlib"], *site.getsitepackages(), site.getusersitepackages(),
                        str(Path(torch.__file__).parents[1]), str(Path(__file__).resolve().parents[1]))
    return _folders(paths["stdlib"], paths["platstdlib"]), packages


def _is_exec(frame) -> bool:
    """Code compiled from a string: `exec`'d, with no file of its own."""
    path = frame.f_code.co_filename
    return path.startswith("<") and not path.startswith("<frozen")


def _handed_back_to(asker):
    """Who gets back what the asker reached, when the asker is a `HANDS_BACK` function or code it calls
    in its own module: that function's caller. None otherwise."""
    entry, path = asker, asker.f_code.co_filename
    while entry.f_back is not None and entry.f_back.f_code.co_filename == path:
        entry = entry.f_back
    if any(path.endswith(os.sep + module) and entry.f_code.co_name == name for module, name in HANDS_BACK):
        return entry.f_back
    return None


class ReachWatch:
    """The audit hook: `report(what, where)` once for each reach and place in the candidate's code."""

    def __init__(self, candidate_folders: list[Path], report: Callable[[str, str], None]) -> None:
        self._stdlib, self._packages = library_folders()
        self._candidate = _folders(*map(str, candidate_folders))
        self._report = report
        self._reported: set[tuple[str, str]] = set()
        self._inside = threading.local()  # the hook's own frame reads raise events too

    def is_candidates(self, path: str) -> bool:
        return path.startswith(self._candidate) and not path.startswith(self._stdlib + self._packages)

    def _is_stdlib(self, path: str) -> bool:
        return path.startswith(self._stdlib) and not path.startswith(self._packages)

    def asked_by_candidate(self, asker) -> str | None:
        """The candidate's `file:line` that gets the answer: the asker itself, or the caller of exec'd code or
        of a `HANDS_BACK` function, looking through the standard library (a callback that contextlib runs).
        None for library bookkeeping and for the harness's own calls."""
        if (receiver := _handed_back_to(asker)) is not None:
            frame = receiver
        elif self.is_candidates(asker.f_code.co_filename) or _is_exec(asker):
            frame = asker
        else:
            return None
        while frame is not None and (_is_exec(frame) or self._is_stdlib(frame.f_code.co_filename)):
            frame = frame.f_back
        if frame is not None and self.is_candidates(frame.f_code.co_filename):
            return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
        return None

    def __call__(self, event: str, args: tuple) -> None:
        if getattr(self._inside, "busy", False) or (what := reached(event, args)) is None:
            return
        self._inside.busy = True
        try:
            where = self.asked_by_candidate(sys._getframe(1))
            if where is not None and (what, where) not in self._reported:
                self._reported.add((what, where))
                self._report(what, where)
        finally:
            self._inside.busy = False


def watch_reaches(candidate_folders: list[Path], report: Callable[[str, str], None]) -> None:
    """From now on, for the rest of the process. The candidate's own folder, the run's scratch and the
    temporary folders count as the candidate's: code it writes there and imports is its code too."""
    folders = [*candidate_folders, Path(tempfile.gettempdir()), Path("/dev/shm")]
    sys.addaudithook(ReachWatch(folders, report))
