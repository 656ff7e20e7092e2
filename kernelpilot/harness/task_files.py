"""The user's paths, checked torch-free before any process starts: a task file and a candidate (both forms of
DESIGN.md § Candidate format). Loading and running them is `task`'s."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.errors import CandidateError, TaskError

TASK_NAMES = ("Model", "get_inputs", "get_init_inputs")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_task_file(path: Path) -> None:
    """Cheap checks the parent makes before starting a worker: exists, parses, names present."""
    if path.is_dir():
        raise TaskError(f"task {path} is a directory, not a Python file")
    if not path.is_file():
        raise TaskError(f"task file not found: {path}")
    if path.suffix != ".py":
        raise TaskError(f"task {path.name} is not a .py file (KernelBench format: a Python module)")
    source = path.read_text(errors="replace")
    try:
        compile(source, str(path), "exec")
    except SyntaxError as error:
        where = f" at line {error.lineno}" if error.lineno else ""
        raise TaskError(f"task {path.name} has a syntax error{where}: {error.msg}") from None
    missing = [name for name in TASK_NAMES if name not in source]
    if missing:
        raise TaskError(f"task {path.name} does not define {', '.join(missing)} (KernelBench format: "
                        "class Model, get_inputs(), get_init_inputs())")


@dataclass(frozen=True)
class Candidate:
    """Where a candidate lives. `kernels_dir` is set for the workspace form."""

    path: Path
    model_file: Path
    kernels_dir: Path | None

    @property
    def form(self) -> str:
        return "workspace" if self.model_file.name == "model_new.py" and self.path.is_dir() else "single_file"


def locate_candidate(path: Path) -> Candidate:
    """Accept a single `.py` with `ModelNew`, or a workspace directory with `model_new.py` (+ `kernels/`)."""
    if path.is_dir():
        model_file = path / "model_new.py"
        if not model_file.is_file():
            raise CandidateError(f"workspace {path} has no model_new.py")
        kernels = path / "kernels"
        return Candidate(path, model_file, kernels if kernels.is_dir() else None)
    if path.is_file() and path.suffix == ".py":
        return Candidate(path, path, None)
    raise CandidateError(f"candidate not found or not a .py file / workspace directory: {path}")
