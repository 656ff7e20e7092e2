"""`kernelpilot finetune SESSIONS... --base-model M`: read the session logs, train, print where the outputs are."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from kernelpilot.agent.textproto import trajectory_in_text_protocol
from kernelpilot.errors import UsageError
from kernelpilot.finetune.recipe import FinetuneOptions
from kernelpilot.session.trajectory import read_trajectories

DEFAULT_OUT = Path("runs/finetune")
_AT_LEAST_ONE = ("lora_rank", "epochs", "max_steps", "batch_size")
_POSITIVE = ("lr", "importance_cap")


def options_from(args) -> FinetuneOptions:
    """The command line as FinetuneOptions: flags left out keep the recipe's defaults."""
    given = {field.name: getattr(args, field.name) for field in dataclasses.fields(FinetuneOptions)
             if hasattr(args, field.name)}
    for name in _AT_LEAST_ONE:
        if name in given and given[name] < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1, not {given[name]}")
    for name in _POSITIVE:
        if name in given and not given[name] > 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive, not {given[name]}")
    return FinetuneOptions(**{**given, "out": Path(given.get("out", DEFAULT_OUT))})


def run(args) -> int:
    from kernelpilot.finetune.trainer import finetune

    options = options_from(args)
    trajectories, unreadable = read_trajectories(Path(path) for path in args.sessions)
    # The adapter is for `local:` models, which call tools in the text protocol: sessions of models with native
    # tool calls are trained on as such a model would have seen and written them.
    report = finetune([trajectory_in_text_protocol(t) for t in trajectories], options, unreadable,
                      say=lambda line: print(line, file=sys.stderr))
    if report.version:
        print(f"{report.version}: adapter {report.outputs['adapter']}, report {report.outputs['report']}")
    return 0
