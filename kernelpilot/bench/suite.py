"""A suite's tasks: a folder in KernelBench's layout (`level1/`, `level2/`, ... or a checkout holding
`KernelBench/level1/...`), a flat folder of task files, or a JSONL / Parquet file with a `code` column (the
layout of the public CUDA-Agent-Ops-6K set), whose rows are written out as task files for the harness to load.
"""

from __future__ import annotations

import fnmatch
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.errors import UsageError

LEVEL_FOLDER = re.compile(r"^level(\d+)$")
NAME_COLUMNS = ("name", "task")
UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class SuiteTask:
    """One task of a suite. `name` is unique within it and keys its results ("level1/19_ReLU")."""

    name: str
    level: int | None
    path: Path

    @property
    def stem(self) -> str:
        return self.name.rsplit("/", 1)[-1]


def discover_suite(suite: Path, scratch: Path) -> list[SuiteTask]:
    """Every task of `suite`, in level and name order. Rows of a data file are written under `scratch`."""
    if not suite.exists():
        raise UsageError(f"suite not found: {suite}")
    tasks = _tasks_from_rows(suite, scratch) if suite.is_file() else _tasks_in_folder(suite)
    if not tasks:
        raise UsageError(f"no tasks in {suite}: it has no rows" if suite.is_file()
                         else f"no task files (*.py) in {suite} or in level folders under it")
    return tasks


def _tasks_in_folder(suite: Path) -> list[SuiteTask]:
    root = next((folder for folder in (suite, suite / "KernelBench") if folder.is_dir() and _level_folders(folder)),
                None)
    if root is None:
        return [SuiteTask(path.stem, None, path) for path in sorted(suite.glob("*.py"))]
    return [SuiteTask(f"{folder.name}/{path.stem}", level, path)
            for level, folder in _level_folders(root) for path in sorted(folder.glob("*.py"), key=_number_first)]


def _level_folders(folder: Path) -> list[tuple[int, Path]]:
    found = [(int(m.group(1)), p) for p in folder.iterdir() if p.is_dir() and (m := LEVEL_FOLDER.match(p.name))]
    return sorted(found)


def _number_first(path: Path) -> tuple[int, str]:
    """KernelBench names its tasks `N_Name.py`: task 10 comes after task 9."""
    number = path.stem.split("_", 1)[0]
    return (int(number) if number.isdigit() else 1 << 30, path.stem)


def _tasks_from_rows(data_file: Path, scratch: Path) -> list[SuiteTask]:
    rows = _read_rows(data_file)
    if rows and "code" not in rows[0]:
        raise UsageError(f"{data_file.name} has no 'code' column (columns: {', '.join(rows[0])})")
    folder = scratch / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    tasks, seen = [], set()
    for index, row in enumerate(rows):
        label = next((str(row[c]) for c in NAME_COLUMNS if row.get(c) not in (None, "")), f"row_{index:05d}")
        name = UNSAFE_NAME.sub("_", label).strip("._") or f"row_{index:05d}"
        if name in seen:
            name = f"{name}_{index:05d}"
        seen.add(name)
        path = folder / f"{name}.py"
        if not path.is_file() or path.read_text() != row["code"]:
            path.write_text(row["code"] or "")
        level = row.get("level")
        tasks.append(SuiteTask(name, int(level) if str(level).isdigit() else None, path))
    return tasks


def _read_rows(data_file: Path) -> list[dict]:
    if data_file.suffix == ".parquet":
        try:
            from pyarrow import parquet
        except ImportError:
            raise UsageError("reading a Parquet suite needs pyarrow: pip install 'kernelpilot[bench]'") from None
        return parquet.read_table(data_file).to_pylist()
    if data_file.suffix not in (".jsonl", ".json"):
        raise UsageError(f"suite {data_file.name}: give a folder of task files, or a .jsonl / .parquet file")
    rows = []
    for number, line in enumerate(data_file.read_text().splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise UsageError(f"{data_file.name} line {number} is not JSON: {error.msg}") from None
    return rows


def select(tasks: list[SuiteTask], levels: tuple[int, ...] = (), pattern: str | None = None,
           sample: int | None = None, seed: int = 0) -> list[SuiteTask]:
    """The tasks of `levels` whose name (or bare file name) matches the glob `pattern`; then `sample` of them,
    stratified by level (each level's share of the sample as of the selection, largest remainders rounded
    up), drawn with `seed`. Levels interleaved (`interleaved`)."""
    chosen = [t for t in tasks if (not levels or t.level in levels)
              and (pattern is None or fnmatch.fnmatch(t.name, pattern) or fnmatch.fnmatch(t.stem, pattern))]
    if sample is None or sample >= len(chosen):
        return interleaved(chosen)
    by_level = _by_level(chosen)
    quotas = {level: sample * len(group) / len(chosen) for level, group in by_level.items()}
    shares = {level: int(quota) for level, quota in quotas.items()}
    for level in sorted(quotas, key=lambda level: shares[level] - quotas[level])[:sample - sum(shares.values())]:
        shares[level] += 1
    rng = random.Random(seed)
    picked = {t.name for level, group in by_level.items() for t in rng.sample(group, shares[level])}
    return interleaved([t for t in chosen if t.name in picked])


def interleaved(tasks: list[SuiteTask]) -> list[SuiteTask]:
    """Each level's tasks in their order, the levels merged in proportion (a level of 100 beside one of 50: two
    of the first to one of the second): a run cut short has done a stratified part of every level, from which
    `metrics.projected_seconds` can tell the whole run's time."""
    by_level = _by_level(tasks)
    place = {t.name: (rank + 0.5) / len(group) for group in by_level.values() for rank, t in enumerate(group)}
    return sorted(tasks, key=lambda t: place[t.name])


def _by_level(tasks: list[SuiteTask]) -> dict[int | None, list[SuiteTask]]:
    by_level: dict[int | None, list[SuiteTask]] = defaultdict(list)
    for task in tasks:
        by_level[task.level].append(task)
    return by_level
