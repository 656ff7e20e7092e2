"""A bench's record on disk as it runs: one JSON line per finished task, flushed as it is written, so a run
that is killed keeps every verdict it reached and the next run with the same `--out` goes on from there.

    <out>/run.json        what the run judges (suite, candidates, device, policy): a resume must match it
    <out>/results.jsonl   one `TaskOutcome` a line
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from kernelpilot.bench.outcome import TaskOutcome
from kernelpilot.errors import UsageError

RUN_FILE = "run.json"
RESULTS_FILE = "results.jsonl"


class Journal:
    """The results of one run under `folder`; `done` holds those of earlier runs with the same settings."""

    def __init__(self, folder: Path, settings: dict) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.path = folder / RESULTS_FILE
        self._check_settings(folder / RUN_FILE, settings)
        self.done: dict[str, TaskOutcome] = {o.task: o for o in self._read()}
        self._lock = threading.Lock()
        self._file = self.path.open("a")

    @staticmethod
    def _check_settings(run_file: Path, settings: dict) -> None:
        if run_file.is_file():
            earlier = json.loads(run_file.read_text())
            if changed := sorted(k for k in settings.keys() | earlier.keys() if settings.get(k) != earlier.get(k)):
                raise UsageError(f"{run_file.parent} holds a run with other settings ({', '.join(changed)}); give "
                                 "another --out")
        else:
            run_file.write_text(json.dumps(settings, indent=2))

    def _read(self) -> list[TaskOutcome]:
        """Every complete line; a torn last line (the run was killed while writing it) is cut off."""
        if not self.path.is_file():
            return []
        outcomes, good_bytes = [], 0
        with self.path.open("rb") as lines:
            for line in lines:
                if (outcome := _parse(line)) is None:
                    break
                outcomes.append(outcome)
                good_bytes += len(line)
        if good_bytes < self.path.stat().st_size:
            with self.path.open("r+b") as file:
                file.truncate(good_bytes)
        return outcomes

    def append(self, outcome: TaskOutcome) -> None:
        with self._lock:
            self._file.write(json.dumps(outcome.to_json(), allow_nan=False) + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def _parse(line: bytes) -> TaskOutcome | None:
    if not line.endswith(b"\n"):
        return None
    try:
        return TaskOutcome.from_json(json.loads(line))
    except (ValueError, TypeError, KeyError):
        return None
