"""The audit hook that sees the candidate reach into the worker (frames, the garbage collector, raw
memory) however the reach is named, and leaves library code's own look at its caller alone.

It runs in a fresh interpreter: an audit hook cannot be removed once added. The candidate's code is a
file in the candidate's folder; each scenario is one of its functions, and the test reads what the hook
reported while that function ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

CANDIDATE = '''
import collections, contextlib, ctypes, importlib, inspect, logging, sys, traceback, typing, warnings


def frame_by_built_name():
    return getattr(sys, "_get" + "frame")(0)


def inspect_currentframe():
    return inspect.currentframe()


def exec_asks():
    scope = {"sys": sys}
    exec("frame = sys._getframe(0)", scope)


def traceback_frame():
    try:
        raise ValueError
    except ValueError as error:
        return error.__traceback__.tb_frame


def generator_frame():
    def counting():
        yield 1
    return counting().gi_frame


def objects_by_built_name():
    return getattr(importlib.import_module("g" + "c"), "get_" + "objects")()


def raw_memory_read():
    return ctypes.string_at(id(ctypes), 8)


def c_api_lookup():
    return ctypes.pythonapi.PyEval_GetFrame


def frame_through_a_library_callback():
    with contextlib.ExitStack() as stack:
        stack.callback(inspect.currentframe)


def exec_through_a_library_callback():
    with contextlib.ExitStack() as stack:
        stack.callback(exec, "import sys; sys._getframe(0)")


def logging_and_warnings():
    logging.getLogger("candidate").warning("a log record")
    warnings.warn("a warning")


def library_bookkeeping():
    collections.namedtuple("Shape", "rows cols")
    typing.TypeVar("T")


def formatted_traceback():
    try:
        raise ValueError
    except ValueError:
        return traceback.format_exc()
'''

RUNNER = '''
import json, sys
from pathlib import Path
from kernelpilot.harness.reach import ReachWatch
folder = Path(sys.argv[1])
sys.path.insert(0, str(folder))
reports = []
sys.addaudithook(ReachWatch([folder], lambda what, where: reports.append((what, where))))
import model_new
seen = {}
for name in sys.argv[2:]:
    reports.clear()
    getattr(model_new, name)()
    seen[name] = sorted({what for what, where in reports if where.startswith("model_new.py:")})
print(json.dumps(seen))
'''

REACHES = {
    "frame_by_built_name": ["sys._getframe"],
    "inspect_currentframe": ["sys._getframe"],
    "exec_asks": ["sys._getframe"],
    "traceback_frame": ["traceback.tb_frame"],
    "generator_frame": ["generator.gi_frame"],
    "objects_by_built_name": ["gc.get_objects"],
    "raw_memory_read": ["ctypes.string_at"],
    "c_api_lookup": ["ctypes lookup of PyEval_GetFrame"],
    "frame_through_a_library_callback": ["sys._getframe"],
    "exec_through_a_library_callback": ["sys._getframe"],
}
NOT_REACHES = ["logging_and_warnings", "library_bookkeeping", "formatted_traceback"]


def test_reaches_are_seen_however_named_and_library_bookkeeping_is_not(tmp_path: Path):
    folder = tmp_path / "candidate"
    folder.mkdir()
    (folder / "model_new.py").write_text(textwrap.dedent(CANDIDATE))
    scenarios = [*REACHES, *NOT_REACHES]
    done = subprocess.run([sys.executable, "-c", RUNNER, str(folder), *scenarios],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {**REACHES, **{name: [] for name in NOT_REACHES}}
