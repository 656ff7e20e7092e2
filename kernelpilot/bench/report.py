"""A bench's results as the contract's JSON object, a markdown report and a plot of the speedups per level.

    <out>/results.json   what `--json` prints
    <out>/report.md      the summary table per level, then one row per task
    <out>/speedups.png   speedup over eager and over torch.compile of each passed task, per level
                         (needs matplotlib, the `kernelpilot[bench]` extra; skipped with a note without it)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from kernelpilot.bench.metrics import NO_LEVEL, level_key, projected_seconds, summarize
from kernelpilot.bench.outcome import TaskOutcome
from kernelpilot.harness.result import format_speedup

RESULTS_JSON = "results.json"
REPORT_MD = "report.md"
PLOT_PNG = "speedups.png"
SUMMARY_COLUMNS = (("tasks", "tasks"), ("task errors", "task_errors"), ("pass", "pass_rate"),
                   ("fast_1 eager", "fast_1_eager"), ("fast_1 compile", "fast_1_compile"),
                   ("geomean eager", "geomean_speedup_eager"), ("geomean compile", "geomean_speedup_compile"),
                   ("mean reward", "mean_reward"))


def bench_json(run: dict, outcomes: list[TaskOutcome], p_values, complete: bool,
               selection: Mapping[int | None, int]) -> dict:
    """`run` (suite, device, policy, candidates, ...) with the results and their summary; where they are fewer
    than the `selection`'s tasks (per level: a `--sample`, or a run cut short), what all of those would take."""
    data = {**run, "complete": complete, "results": [o.to_json() for o in outcomes],
            "summary": summarize(outcomes, p_values)}
    if sum(selection.values()) > len(outcomes):
        data["selection"] = {"tasks": sum(selection.values()),
                             "by_level": {level_key(level): count for level, count in selection.items()},
                             "projected_seconds": projected_seconds(outcomes, selection)}
    return data


def projection_line(data: dict) -> str | None:
    """The projection for the whole selection, in words, when the run covered part of it."""
    if "selection" not in data:
        return None
    selection, seconds = data["selection"], data["selection"]["projected_seconds"]
    if seconds is None:
        return f"No projection for all {selection['tasks']} selected tasks yet: a level has no task done."
    return (f"Projected for all {selection['tasks']} selected tasks at this pace: {duration(seconds)} "
            f"(each level's mean seconds per task times its tasks; {duration(data['summary']['seconds'])} "
            f"for the {len(data['results'])} done).")


def duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def cell(key: str, value) -> str:
    if key.startswith("geomean"):
        return format_speedup(value)
    if value is None:
        return "-"
    if key.endswith("rate") or key.startswith("fast"):
        return f"{100 * value:.1f}%"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def level_cell(level: int | None) -> str:
    """A flat suite's tasks have no level: a dash, not the JSON's key "none"."""
    return "-" if level is None else str(level)


def reward_cell(outcome: TaskOutcome) -> str:
    """A task that was not judged has no reward to show: the mean reward leaves it out too."""
    return str(outcome.reward) if outcome.judged else "-"


def summary_rows(summary: dict) -> list[list[str]]:
    """One row per level, then the overall one: the level, then `SUMMARY_COLUMNS`. A flat suite (no levels)
    has the overall row alone."""
    groups = [(f"level {level}", group) for level, group in summary["by_level"].items() if level != NO_LEVEL]
    groups.append(("all", summary))
    return [[label] + [cell(key, group[key]) for _, key in SUMMARY_COLUMNS] for label, group in groups]


def markdown(data: dict) -> str:
    summary = data["summary"]
    header = ["level"] + [title for title, _ in SUMMARY_COLUMNS]
    lines = [f"# kernelpilot bench: {data['suite']}", "",
             f"device {data['device']}, policy {data['policy']}, candidates {data['candidates']}"
             + ("" if data["complete"] else " — **incomplete run**"), "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in summary_rows(summary)]
    fast_p = ", ".join(f"fast_{p} {cell('fast', v)} / {cell('fast', summary['fast_p_compile'][p])}"
                       for p, v in summary["fast_p_eager"].items())
    lines += ["", f"fast_p (vs eager / vs torch.compile): {fast_p}", ""]
    if projection := projection_line(data):
        lines += [projection, ""]
    if summary["violations"]:
        lines += ["Violations by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(summary["violations"].items())),
                  ""]
    lines += ["| task | level | status | reward | vs eager | vs compile | seconds | violations / error |",
              "|---|---|---|---|---|---|---|---|"]
    for o in map(TaskOutcome.from_json, data["results"]):
        lines.append(f"| {o.task} | {level_cell(o.level)} | {o.status} | {reward_cell(o)} | "
                     f"{format_speedup(o.speedup_vs_eager)} | {format_speedup(o.speedup_vs_compile)} | "
                     f"{o.seconds:.1f} | {o.reason.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write_reports(folder: Path, data: dict) -> str | None:
    """results.json, report.md and the plot; returns a note when the plot was skipped."""
    (folder / RESULTS_JSON).write_text(json.dumps(data, indent=1, allow_nan=False))
    (folder / REPORT_MD).write_text(markdown(data))
    return plot(folder / PLOT_PNG, data)


def plot(path: Path, data: dict) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"{path.name} skipped: matplotlib is not installed (pip install 'kernelpilot[bench]')"
    passed = [r for r in data["results"] if r["status"] == "correct"]
    levels = sorted({level_key(r["level"]) for r in data["results"]})
    labels = [f"level {level}" if level != NO_LEVEL else "all" for level in levels]
    figure, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, against in zip(axes, ("eager", "compile")):
        series = [[r[f"speedup_vs_{against}"] for r in passed
                   if level_key(r["level"]) == level and r[f"speedup_vs_{against}"]] for level in levels]
        ax.boxplot([s or [float("nan")] for s in series], tick_labels=labels)
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_yscale("log")
        ax.set_title(f"speedup vs {'torch.compile' if against == 'compile' else against} (passed tasks)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return None
