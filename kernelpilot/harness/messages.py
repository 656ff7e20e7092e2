"""What the worker tells the judge: one frozen dataclass per kind, the contract both sides share.

On the wire a message is a dict of plain values and tensors (`to_wire`), saved with `torch.save` and read
back with `weights_only=True`, so nothing the candidate's process writes can run code in the judge;
`from_wire` rebuilds the dataclass, and a dict that does not fit one (an unknown kind, a missing or extra
field) is no message. The judge consumes them with `match` (`observations.Observations.receive`).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from kernelpilot.harness.shared_output import SharedOutput
from kernelpilot.harness.spot_check import OutputLayout


@dataclass(frozen=True)
class WorkerMessage:
    kind: ClassVar[str] = "message"

    def to_wire(self) -> dict[str, Any]:
        """Shallow, unlike `dataclasses.asdict`, but for the dataclasses a message holds (`SharedOutput`)."""
        return {"kind": self.kind, **{f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}}


def _plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


MESSAGES: dict[str, type[WorkerMessage]] = {}


def message(cls: type[WorkerMessage]) -> type[WorkerMessage]:
    MESSAGES[cls.kind] = cls
    return cls


class NotAMessage(ValueError):
    """A dict on the channel that is no message of the harness's."""


def from_wire(data: object) -> WorkerMessage:
    """The message `data` holds; `NotAMessage` when it holds none (a field missing, extra or of another type:
    the judge reads only what it can read)."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise NotAMessage("not a message")
    kind = data.pop("kind")
    if kind not in MESSAGES:
        raise NotAMessage(f"unknown kind '{kind[:40]}'")
    cls = MESSAGES[kind]
    hints = _field_types(cls)
    if set(data) - set(hints):
        raise NotAMessage(f"{kind}: unknown fields {sorted(map(str, set(data) - set(hints)))[:5]}")
    if wrong := [name for name, value in data.items() if not _fits(value, hints[name])]:
        raise NotAMessage(f"{kind}: fields {wrong[:5]} are not of their types")
    try:
        return cls(**{name: _built(value, hints[name]) for name, value in data.items()})
    except TypeError as error:  # a field missing
        raise NotAMessage(f"{kind}: {error}") from None


def _built(value: object, hint: object) -> object:
    """`value` (which fits `hint`) with each dict that stands for a dataclass made into it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return hint(**{name: _built(item, _field_types(hint)[name]) for name, item in value.items()})
    if origin in (types.UnionType, typing.Union):
        return next((_built(value, arg) for arg in args if _fits(value, arg)), value)
    if origin is list:
        return [_built(item, args[0]) for item in value]
    return value


@functools.cache
def _field_types(cls: type) -> dict[str, object]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _fits(value: object, hint: object) -> bool:
    """`value` is of the type `hint` names, for the types messages are made of."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if dataclasses.is_dataclass(hint):
        fields = _field_types(hint)
        return isinstance(value, dict) and set(value) == set(fields) and \
            all(_fits(item, fields[name]) for name, item in value.items())
    if origin in (types.UnionType, typing.Union):
        return any(_fits(value, arg) for arg in args)
    if hint is type(None):
        return value is None
    if origin is list:
        return isinstance(value, list) and all(_fits(item, args[0]) for item in value)
    if origin is tuple:  # tuple[int, ...]
        return isinstance(value, tuple) and all(_fits(item, args[0]) for item in value)
    if origin is dict:
        return isinstance(value, dict) and all(_fits(k, args[0]) and _fits(v, args[1]) for k, v in value.items())
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is torch.Tensor:
        return type(value) is torch.Tensor
    return isinstance(value, hint)  # type: ignore[arg-type]


# --- the trusted half: before the candidate's code is imported ---------------------------------------


@message
@dataclass(frozen=True)
class Phase(WorkerMessage):
    kind: ClassVar[str] = "phase"
    name: str


@message
@dataclass(frozen=True)
class TaskInfo(WorkerMessage):
    kind: ClassVar[str] = "task_info"
    precision: dict[str, Any]
    training: bool
    """The mode the model runs in as constructed (KernelBench does not call eval())."""
    background_cpu_ms: float
    """Other threads' CPU time after eager's calls: the bar the candidate's calls are held to."""
    device_name: str
    torch_version: str


@message
@dataclass(frozen=True)
class Baseline(WorkerMessage):
    kind: ClassVar[str] = "baseline"
    eager: dict[str, list[float]]
    eager_watched: dict[str, list[float]]
    """Eager's runs under the candidate's conditions (the profiler watching), for the parent's clock."""
    compile: dict[str, dict[str, Any]]
    compile_latency_s: dict[str, float]


@message
@dataclass(frozen=True)
class Warmed(WorkerMessage):
    """The candidate's warm-up calls are done; the worker waits for the first timed run's input curve. The
    parent draws each of those runs' curves only now and after each run (`TimedRun`'s answer carries the next
    one): the candidate's code can learn a run's inputs no earlier than the harness writes them."""

    kind: ClassVar[str] = "warmed"


@message
@dataclass(frozen=True)
class Ready(WorkerMessage):
    """CPU: a timed run's cache flush and inputs are done, its call comes next; the worker waits for the go.
    The parent reads the worker's CPU time then and at the call's `Returned`: the call, and nothing else."""

    kind: ClassVar[str] = "ready"
    run: int


@message
@dataclass(frozen=True)
class Returned(WorkerMessage):
    """CPU: a timed run's call just returned and its clock stopped; the worker waits for the parent's word
    before it does anything else (the profiler's bookkeeping, the report). The parent stops it meanwhile and
    reads the answers' sampled elements where `outputs` says they lie (`spot_check.read_samples`)."""

    kind: ClassVar[str] = "returned"
    run: int
    outputs: list[OutputLayout | None]


@message
@dataclass(frozen=True)
class TimedRun(WorkerMessage):
    """A timed run just ended (eager's, torch.compile's or the candidate's); the worker waits for the answer
    (on CUDA the seed of the positions to sample; for the candidate's, the next run's input curve)."""

    kind: ClassVar[str] = "timed_run"
    run: int


@message
@dataclass(frozen=True)
class SpotCheck(WorkerMessage):
    """A timed run's answers at the positions the parent named after it ran (CUDA; on the CPU the parent
    reads them itself)."""

    kind: ClassVar[str] = "spot_check"
    run: int
    samples: list[torch.Tensor | None]
    shapes: list[tuple[int, ...] | None]
    strides: list[tuple[int, ...] | None]
    """The outputs' own strides (a view that repeats one row reads right at any position: red team 40)."""


# --- the candidate ----------------------------------------------------------------------------------


@message
@dataclass(frozen=True)
class Imported(WorkerMessage):
    kind: ClassVar[str] = "imported"
    extensions: list[str]
    subclasses_reference: bool


@dataclass(frozen=True)
class Observed(WorkerMessage):
    """One observed forward of the candidate (`worker.Worker.call`): its outputs, snapshot on the stream it
    ran on and shared for the judge to copy, and every guard's observation."""

    seed: int
    checksum: list[float]
    outputs: list[SharedOutput | None]
    subclassed: list[str]
    plain_values: list[str]
    devices: list[str]
    non_dense: list[int]
    mutated: list[int]
    aliased: list[int]
    new_threads: list[str]
    background_cpu_ms: float | None
    child_processes: list[str]
    child_cpu_ms: float
    ops: dict[str, int]
    profiler_ops: dict[str, int]
    device_kernels: list[str]
    extension_calls: int
    numpy_calls: int
    stream_changed: bool
    modes_active: list[str]
    launches: dict[str, int]


@message
@dataclass(frozen=True)
class Trial(Observed):
    kind: ClassVar[str] = "trial"
    trial: int = 0


@message
@dataclass(frozen=True)
class PostCheck(Observed):
    """A re-check after timing, in the timing buffers: caching and deferred work show here."""

    kind: ClassVar[str] = "post_check"


@message
@dataclass(frozen=True)
class Timing(WorkerMessage):
    kind: ClassVar[str] = "timing"
    candidate: dict[str, list[float]]
    ops: dict[str, int]
    """ATen ops the profiler saw in the warm-up and timed calls, all of them together."""
    watched_calls: int


@message
@dataclass(frozen=True)
class KernelRows(WorkerMessage):
    kind: ClassVar[str] = "kernels"
    rows: list[dict[str, Any]]


@message
@dataclass(frozen=True)
class Final(WorkerMessage):
    """What changed in the worker while the candidate ran, read after its last call."""

    kind: ClassVar[str] = "final"
    patched: list[str]
    precision: list[str]
    reference: list[str]
    threads: list[str]
    child_processes: list[str]
    launch_counts: dict[str, int]


@message
@dataclass(frozen=True)
class Reached(WorkerMessage):
    """The audit hook saw the candidate reach into the worker's frames, memory or libraries."""

    kind: ClassVar[str] = "reached"
    what: str
    where: str


# --- either half -------------------------------------------------------------------------------------


@message
@dataclass(frozen=True)
class Failed(WorkerMessage):
    """The task (scope `task`), the candidate's import (`import`) or a call (`run`) failed."""

    kind: ClassVar[str] = "error"
    scope: str
    message: str
    traceback: str = field(default="", repr=False)


@message
@dataclass(frozen=True)
class Done(WorkerMessage):
    kind: ClassVar[str] = "done"
