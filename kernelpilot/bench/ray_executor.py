"""The same per-task function as the local executor, as Ray tasks: one GPU each on cuda (Ray sets the task's
`CUDA_VISIBLE_DEVICES`, which its judge's worker inherits), one CPU each on the CPU; on a cluster at
`--ray-address` or a local Ray started here.

The task's and the candidate's files travel with the Ray task (a cluster's nodes do not share this machine's
disk), and kernelpilot itself as a `py_modules` entry of the job's runtime environment. Needs `ray` (the
`kernelpilot[ray]` extra), imported only here.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import kernelpilot
from kernelpilot.bench.judging import judge_task
from kernelpilot.bench.outcome import TaskOutcome
from kernelpilot.bench.suite import SuiteTask
from kernelpilot.errors import UsageError
from kernelpilot.harness import EvalOptions

Files = dict[str, bytes]


def pack(path: Path) -> Files:
    """A file, or a folder's files, by their path relative to `path`'s parent: unpacked into a folder, `path`
    comes back as that folder / `path.name`."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return {str(p.relative_to(path.parent)): p.read_bytes() for p in files}


def unpack(files: Files, folder: Path) -> None:
    for relative, data in files.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def judge_shipped(task: SuiteTask, task_files: Files, candidate: Path, candidate_files: Files,
                  options: EvalOptions, spent_s: float) -> TaskOutcome:
    """On a Ray worker: the files written to a scratch folder of its own and judged there; the outcome names
    the candidate as the driver knows it."""
    with tempfile.TemporaryDirectory(prefix="kernelpilot-bench-") as scratch:
        unpack(task_files, Path(scratch) / "task")
        unpack(candidate_files, Path(scratch) / "candidate")
        outcome = judge_task(replace(task, path=Path(scratch) / "task" / task.path.name),
                             Path(scratch) / "candidate" / candidate.name, options, spent_s=spent_s)
    return replace(outcome, candidate=str(candidate))


class RayExecutor:
    """Each `judge` call is one Ray task; `workers` runner threads keep that many in flight."""

    def __init__(self, options: EvalOptions, workers: int | None, address: str | None) -> None:
        try:
            import ray
        except ImportError:
            raise UsageError("--executor ray needs ray: pip install 'kernelpilot[ray]'") from None
        self._ray = ray
        self._started_here = not ray.is_initialized()
        if self._started_here:
            ray.init(address=address, runtime_env={"py_modules": [str(Path(kernelpilot.__file__).parent)]},
                     log_to_driver=False, include_dashboard=False)
        resources = {"num_gpus": 1} if options.device == "cuda" else {"num_cpus": 1}
        self._remote = ray.remote(**resources, max_retries=0)(judge_shipped)
        self._options = options
        kind = "GPU" if options.device == "cuda" else "CPU"
        available = int(ray.cluster_resources().get(kind, 0))
        if available < 1:
            self.close()
            raise UsageError(f"the Ray cluster has no {kind} for --device {options.device}")
        self.workers = workers or (available if options.device == "cuda" else 1)

    def judge(self, task: SuiteTask, candidate: Path, spent_s: float = 0.0) -> TaskOutcome:
        ref = self._remote.remote(task, pack(task.path), candidate, pack(candidate), self._options, spent_s)
        return self._ray.get(ref)

    def close(self) -> None:
        if self._started_here:
            self._ray.shutdown()
