"""What a finetune run did: report.json (everything), report.md (for people) and metrics.png beside them."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelpilot.finetune.recipe import STAGES

PLOTTED = ("loss", "reward", "kl", "clip_fraction", "explained_variance", "entropy")


def _finite(value: float | None) -> float | None:
    """JSON has no NaN: a metric that is not defined for a step is null."""
    return None if value is None or math.isnan(value) else round(value, 6)


@dataclass(frozen=True)
class StepMetrics:
    """One optimizer step, averaged over all ranks' tokens (reward: over the step's sessions)."""

    stage: str
    step: int
    """1-based over the whole run."""
    stage_step: int
    loss: float
    tokens: int
    seconds: float
    reward: float | None = None
    kl: float | None = None
    clip_fraction: float | None = None
    explained_variance: float | None = None
    entropy: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {name: _finite(value) if isinstance(value, float) else value
                for name, value in dataclasses.asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StepMetrics:
        return cls(**{name: float("nan") if value is None and name in PLOTTED else value
                      for name, value in data.items()})


@dataclass(frozen=True)
class Sessions:
    """Which sessions each stage could use, and why others were left out."""

    read: int
    skipped: tuple[str, ...]
    """One line for every session that could not be used at all, saying which and why."""
    rft: int
    """Positive reward, no invalid tool calls."""
    critic: int
    """Every usable session (one that evaluated nothing counts as failed)."""
    ppo: int
    """Sessions with behaviour logprobs for every response."""
    without_logprobs: int
    """Sessions without (usable) behaviour logprobs: no PPO, RFT only (when successful)."""

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "skipped": list(self.skipped)}


@dataclass(frozen=True)
class StageOutcome:
    stage: str
    steps: int
    note: str
    """Why it stopped, or why it did not run."""


@dataclass(frozen=True)
class FinetuneReport:
    version: str
    base_model: str
    device: str
    world_size: int
    options: dict[str, Any]
    recipe: dict[str, float]
    sessions: Sessions
    stages: tuple[StageOutcome, ...]
    steps: tuple[StepMetrics, ...]
    outputs: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "base_model": self.base_model, "device": self.device,
                "world_size": self.world_size, "options": self.options, "recipe": self.recipe,
                "sessions": self.sessions.to_json(), "stages": [dataclasses.asdict(s) for s in self.stages],
                "steps": [s.to_json() for s in self.steps], "outputs": self.outputs,
                "seconds": round(self.seconds, 2), "tokens_per_s": round(self.tokens_per_second, 1)}

    @property
    def tokens_per_second(self) -> float:
        busy = sum(s.seconds for s in self.steps)
        return sum(s.tokens for s in self.steps) / busy if busy else 0.0


def write(report: FinetuneReport, out: Path) -> None:
    (out / "report.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    plotted = _plot(report.steps, out / "metrics.png") if report.steps else False
    (out / "report.md").write_text(_markdown(report, plotted))


def _plot(steps: tuple[StepMetrics, ...], path: Path) -> bool:
    """metrics.png: one panel per metric over the steps, a colour per stage; False when matplotlib is missing."""
    if importlib.util.find_spec("matplotlib") is None:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    figure, axes = plt.subplots(2, 3, figsize=(13, 6.5), constrained_layout=True)
    for axis, metric in zip(axes.flat, PLOTTED):
        for colour, stage in enumerate(STAGES):
            points = [(s.step, getattr(s, metric)) for s in steps if s.stage == stage]
            points = [(x, y) for x, y in points if y is not None and not math.isnan(y)]
            if points:
                axis.plot(*zip(*points), marker=".", label=stage, color=f"C{colour}")
        axis.set_title(metric.replace("_", " "))
        axis.set_xlabel("step")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.grid(alpha=0.3)
        if axis.lines:
            axis.legend(fontsize="small")
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return True


def _cell(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.4g}"


def _markdown(report: FinetuneReport, plotted: bool) -> str:
    s = report.sessions
    summary = (f"Base model `{report.base_model}` on {report.device} × {report.world_size}, "
               f"{report.seconds:.0f} s, {report.tokens_per_second:.0f} trained tokens/s.")
    columns = ("| read | skipped | RFT (reward > 0, no invalid tool calls) | critic "
               "| PPO (with behaviour logprobs) | without logprobs (RFT only) |")
    lines = [f"# Finetune `{report.version}`", "", summary, "", "## Sessions", "", columns,
             "|---|---|---|---|---|---|",
             f"| {s.read} | {len(s.skipped)} | {s.rft} | {s.critic} | {s.ppo} | {s.without_logprobs} |", ""]
    lines += [f"- {line}" for line in s.skipped]
    lines += ["", "## Stages", "", "| stage | steps | last loss | note |", "|---|---|---|---|"]
    for outcome in report.stages:
        last = next((m.loss for m in reversed(report.steps) if m.stage == outcome.stage), None)
        lines.append(f"| {outcome.stage} | {outcome.steps} | {_cell(last)} | {outcome.note} |")
    lines += ["", "## Metrics", ""]
    lines.append("![loss, reward, KL, clip fraction, explained variance, entropy per step](metrics.png)" if plotted
                 else "_No plots: matplotlib is not installed (`pip install matplotlib`)._")
    lines += ["", "| step | stage | loss | reward | KL | clip fraction | explained variance | entropy | tokens |",
              "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {m.step} | {m.stage} | {_cell(m.loss)} | {_cell(m.reward)} | {_cell(m.kl)} | {_cell(m.clip_fraction)} "
              f"| {_cell(m.explained_variance)} | {_cell(m.entropy)} | {m.tokens} |" for m in report.steps]
    lines += ["", "## Outputs", ""] + [f"- {name}: `{path}`" for name, path in report.outputs.items()]
    return "\n".join(lines) + "\n"
