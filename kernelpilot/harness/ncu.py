"""Nsight Compute counters for a candidate that passed: achieved bandwidth and occupancy per kernel.

Shown in the TUI's timing view, never rewarded: ncu replays every kernel with its counters on, so its
durations are not the harness's timings (never time under a profiler) and it runs outside the judged
worker, after the verdict.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from collections import defaultdict

from kernelpilot.harness.result import KernelMetrics

METRICS = {
    "gpu__time_duration.sum": ("duration_us", 1e-3),
    "dram__bytes.sum.per_second": ("dram_gb_per_s", 1e-9),
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": ("dram_pct_of_peak", 1.0),
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": ("sm_pct_of_peak", 1.0),
    "sm__warps_active.avg.pct_of_peak_sustained_active": ("achieved_occupancy_pct", 1.0),
    "sm__maximum_warps_per_active_cycle_pct": ("theoretical_occupancy_pct", 1.0),
}
"""ncu metric → (KernelMetrics field, factor from ncu's base unit: ns → µs, byte/s → GB/s)."""


class NcuError(Exception):
    """ncu ran but gave no metrics; the message is one line saying why."""


def command(job: dict) -> list[str]:
    """ncu around `ncu_target`, profiling only the forward between cudaProfilerStart and Stop."""
    return ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--target-processes", "all",
            "--csv", "--page", "raw", "--print-units", "base", "--print-kernel-base", "function",
            "--metrics", ",".join(METRICS),
            sys.executable, "-m", "kernelpilot.harness.ncu_target", json.dumps(job)]


def run(cmd: list[str], env: dict[str, str], timeout_s: float) -> tuple[KernelMetrics, ...]:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s,
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        raise NcuError(f"ncu timed out after {timeout_s:.0f} s") from None
    return parse(done.stdout, done.stderr)


def parse(stdout: str, stderr: str = "") -> tuple[KernelMetrics, ...]:
    """`--csv --page raw` output: a header row, a units row, one row per profiled launch."""
    start = stdout.find('"ID"')
    if start < 0:
        raise NcuError(_last_error(stdout + "\n" + stderr))
    rows = [row for row in csv.DictReader(io.StringIO(stdout[start:])) if row.get("ID", "").strip().isdigit()]
    if not rows:
        raise NcuError("ncu profiled no kernel of the candidate's forward")
    launches: dict[str, list[dict[str, float | None]]] = defaultdict(list)
    for row in rows:
        launches[row["Kernel Name"]].append(
            {field: _number(row.get(metric), factor) for metric, (field, factor) in METRICS.items()})
    return tuple(sorted((_merge(name, values) for name, values in launches.items()), key=lambda k: -k.duration_us))


def _merge(name: str, launches: list[dict[str, float | None]]) -> KernelMetrics:
    """Launches of one kernel as one row: durations summed, rates and percentages weighted by duration."""
    durations = [launch["duration_us"] or 0.0 for launch in launches]
    total = sum(durations)

    def weighted(field: str) -> float | None:
        pairs = [(launch[field], d) for launch, d in zip(launches, durations) if launch[field] is not None]
        if not pairs:
            return None
        weight = sum(d for _, d in pairs)
        return sum(v * d for v, d in pairs) / weight if weight else sum(v for v, _ in pairs) / len(pairs)

    return KernelMetrics(name=name, launches=len(launches), duration_us=total,
                         **{field: weighted(field) for field, _ in METRICS.values() if field != "duration_us"})


def _number(text: str | None, factor: float) -> float | None:
    try:
        return float((text or "").replace(",", "")) * factor
    except ValueError:
        return None


def _last_error(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if "ERROR" in line or "ERR_" in line] or lines or ["ncu printed nothing"]
    return " ".join(errors[-1].split())[:300]
