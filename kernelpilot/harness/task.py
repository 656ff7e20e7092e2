"""Loading KernelBench-format tasks and candidates (both forms of DESIGN.md § Candidate format)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import torch

from kernelpilot.errors import TaskError
from kernelpilot.harness.slices import aligned_slices
from kernelpilot.harness.task_files import TASK_NAMES

T = TypeVar("T")


def import_file(path: Path, module_name: str) -> ModuleType:
    """Import a file as a fresh module (registered in sys.modules so dataclasses and pickling work)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def load_task_module(path: Path) -> ModuleType:
    """Import the task and check its names; import errors become a one-line `TaskError`."""
    try:
        module = import_file(path, "kernelpilot_task")
    except Exception as error:  # the task's own import-time code can raise anything
        raise TaskError(f"task {path.name} failed to import: {type(error).__name__}: {error}") from None
    missing = [name for name in TASK_NAMES if not hasattr(module, name)]
    if missing:
        raise TaskError(f"task {path.name} does not define {', '.join(missing)}")
    return module


def made_on(device: str, seed: int, make: Callable[[], T]) -> T:
    """`make()` under `seed`, with `device` as torch's default, so the same values come out in every process.

    Made on the device itself where the code allows it: gigabytes of inputs or weights made on the host and
    copied over cost seconds each time, on the GPU milliseconds. Code that needs host tensors (numpy, say)
    makes them on the host, as it always did.
    """
    torch.manual_seed(seed)
    try:
        with torch.device(device):
            return make()
    except Exception:
        torch.manual_seed(seed)
        return make()


def make_inputs(task: ModuleType, seed: int, device: str) -> list[object]:
    """The task's inputs for `seed`, on `device`."""
    inputs = made_on(device, seed, task.get_inputs)
    if inputs is None or isinstance(inputs, (torch.Tensor, dict, str, bytes)):
        raise TaskError(f"get_inputs() returns {type(inputs).__name__}, not a list of forward's arguments")
    return [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]


def as_outputs(value: object) -> list[object]:
    """forward's answer as a list of outputs (a tensor, or a tuple or list of them)."""
    return list(value) if isinstance(value, (tuple, list)) else [value]


def to_float64(inputs: list[object]) -> list[object]:
    return [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def checksum(inputs: list[object]) -> list[float]:
    """Each input tensor's sum plus its sum of magnitudes, accumulated in float64 slice by slice: the judge's
    reference and the worker's call were given the same inputs."""
    return [sum(_slice_checksum(s) for (s,) in aligned_slices(t)) for t in inputs if isinstance(t, torch.Tensor)]


def _slice_checksum(t: torch.Tensor) -> float:
    if not t.is_floating_point():
        t = t.double()
    return float(t.sum(dtype=torch.float64)) + float(torch.linalg.vector_norm(t, 1, dtype=torch.float64))
