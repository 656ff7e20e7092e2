"""Turnaround of one small CUDA candidate: first build, rebuild after an edit, verify, profile — vs load_inline.

    python benchmarks/turnaround.py [--repeats 5]

Runs on a GPU machine. Everything is measured in this one run, with a fresh kernelpilot cache and a
fresh torch extensions folder, so the load_inline column is a cold build of the same kernel.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "harness" / "cases"
TASK = CASES / "relu_scale.py"
WORKSPACE = CASES / "cuda" / "fused"
LOAD_INLINE = CASES / "cuda" / "load_inline.py"


def timed_evaluation(workspace: Path) -> dict[str, float]:
    """One evaluation split into its phases by the harness's own log markers."""
    from kernelpilot.harness import EvalOptions, evaluate

    marks: list[tuple[str, float]] = [("start", time.perf_counter())]
    result = evaluate(TASK, workspace, EvalOptions(device="cuda"),
                      on_log=lambda line: marks.append((line, time.perf_counter())))
    marks.append(("[end]", time.perf_counter()))
    assert result.correct, result.error
    build_done = next(t for label, t in marks if label.startswith("built "))
    phases = result.protocol["phase_seconds"]
    return {
        "rebuild": build_done - marks[0][1],
        "worker start (python + torch + CUDA)": phases["start"],
        "reference answers (all seeds, float64)": phases["setup"],
        "eager baseline timing": phases["baseline"],
        "import": phases["import"],
        "verify": phases["verify"],
        "profile": phases["profile"],
        "total": marks[-1][1] - marks[0][1],
    }


def cold_load_inline_seconds(extensions_dir: Path) -> float:
    """Seconds for load_inline of the same kernel in a fresh process, minus that process's torch import."""
    env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(extensions_dir)}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, env=env)
    baseline = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([sys.executable, str(LOAD_INLINE)], check=True, env=env, capture_output=True)
    return time.perf_counter() - started - baseline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kernelpilot-turnaround-"))
    os.environ["KERNELPILOT_CACHE_DIR"] = str(scratch / "cache")
    workspace = scratch / "workspace"
    shutil.copytree(WORKSPACE, workspace)
    kernel = workspace / "kernels" / "relu_bias_scale.cu"
    original = kernel.read_text()

    from kernelpilot.harness.build import build_kernels

    first_build = build_kernels(workspace / "kernels", "cuda")
    assert first_build.ok, first_build.log
    first_eval = timed_evaluation(workspace)  # measures and caches the torch.compile baseline
    rows: dict[str, list[float]] = {}
    for repeat in range(args.repeats):
        kernel.write_text(f"{original}\n// edit {repeat}\n")
        for name, seconds in timed_evaluation(workspace).items():
            rows.setdefault(name, []).append(seconds)
    inline = [cold_load_inline_seconds(scratch / f"extensions-{i}") for i in range(max(1, args.repeats // 2))]

    table = Table(title=f"Turnaround of one small CUDA candidate (median of {args.repeats})")
    table.add_column("step")
    table.add_column("seconds", justify="right")
    table.add_row("first build of the workspace (cold nvcc + link)", f"{first_build.seconds:.2f}")
    table.add_row("first evaluation (incl. torch.compile baseline)", f"{first_eval['total']:.2f}")
    for name, values in rows.items():
        table.add_row(f"after editing one kernel: {name}", f"{statistics.median(values):.2f}")
    rebuild_verify_profile = [r + v + p for r, v, p in zip(rows["rebuild"], rows["verify"], rows["profile"])]
    table.add_row("rebuild + verify + profile (target ≤ 5 s)", f"{statistics.median(rebuild_verify_profile):.2f}")
    table.add_row("load_inline of the same kernel, cold", f"{statistics.median(inline):.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
