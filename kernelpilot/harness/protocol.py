"""Every number the verdict depends on, in one place. Each evaluation records them in `protocol`."""

from __future__ import annotations

from dataclasses import dataclass, field

VERIFY_TRIALS = 5
"""Fresh-seed correctness trials (KernelBench and CUDA Agent use 5)."""

POST_TIMING_CHECKS = 1
"""Extra seeds checked after timing, in the timing buffers: catches caching and deferred work."""

DEGENERACY_PROBES = 2
"""Seeds of the keeper's own, none of the candidate's, on which the task must give answers that depend on
its inputs and are not constant: else a trivial answer would pass."""

WARMUP_RUNS = 3
TIMED_RUNS = 30
TIMING_LOOP_VERSION = 5
"""Bumped whenever the timing loop changes: compile baselines cached under an older loop are re-measured."""
INPUT_SETS = 3
"""Input sets rotated during timing, so a result cached on an address or a value never pays."""
TIMING_INPUT_BYTES = 4 << 30
"""The rotated sets together hold at most this much (never fewer than one set): a task with 6 GB of inputs
would otherwise hold 19 GB of them through its timing, beside its outputs and the keeper's float64 answers.
One set still gives every run new values (`timing.FreshInputs`' curve)."""


def timing_input_sets(input_bytes: int) -> int:
    """How many input sets the timing rotates, for a task whose inputs hold `input_bytes`."""
    return max(1, min(INPUT_SETS, TIMING_INPUT_BYTES // max(input_bytes, 1)))

CHECK_SAMPLES = 4096
"""Elements of each output sampled after every timed run, at positions drawn anew for each run and named to the
worker only after it ran: nothing the worker does or writes differs between runs to tell a candidate which are
checked."""

CHECKED_TIMED_RUNS = 8
"""The candidate's timed runs held to eager's answer on the same inputs (the keeper's, made after the timing),
drawn once the timing is over: a candidate that skipped the work in half its runs to move the median is caught
with odds of 1 − C(15, 8) / C(30, 8) > 99.9 %, for the keeper's eight calls rather than thirty."""

L2_FLUSH_BYTES = {"cuda": 256 << 20, "cpu": 32 << 20}

TOLERANCE = {
    "torch.float64": (1e-7, 1e-7),
    "torch.float32": (1e-4, 1e-4),
    "torch.float16": (1e-2, 1e-2),
    "torch.bfloat16": (1e-2, 1e-2),
}
"""(atol, rtol) by output dtype, named as `str(dtype)` (this module is torch-free: the judge reads it before
torch is imported); `--tol` overrides both."""

CALIBRATION_FACTOR = 2.0
"""A candidate may err up to this multiple of the eager baseline's own error versus float64."""

DISCRIMINATION = 10
"""An output a constant would pass at its dtype's tolerance is judged at an absolute one this many times
smaller than what the best constant misses by."""

SPEEDUP_MILESTONE = 1.05
"""Faster means more than 5 % faster (CUDA Agent's reward)."""

SIDE_STREAM_SLACK_MS = 0.05
SIDE_STREAM_SLACK_FRAC = 0.25
"""Host-clock time may exceed event time by eager's own gap plus this much before work is called hidden."""

CLOCK_CALIBRATION_RUNS = 10
"""Eager's runs under the candidate's conditions (the profiler watching), for the parent's clock alone."""
OUTSIDE_CLOCK_FLOOR_MS = {"cuda": 0.05, "cpu": 0.5}
OUTSIDE_CLOCK_FRAC = {"cuda": 0.05, "cpu": 0.25}
OUTSIDE_CLOCK_NOISE = 3.0
OUTSIDE_CLOCK_HARNESS_FRAC = {"cuda": 0.1, "cpu": 0.25}
"""The parent bounds every time the worker reports with clocks no code in the worker can change: on CUDA its
own wall clock around each timed run, on the CPU the worker's CPU time read from /proc around each call
(`judge.outside_clock`). Calibrated on eager's runs under the same watch, it accounts for a share of the
candidate's time; a reported time below that share by more than the floor, these fractions of the
accounted time and of the harness's own work per run (the CPU's caches, shared with another evaluation
in CI, move a run's CPU time by up to a fifth), and this many standard errors of the medians is time the
worker's clock lost: a clock rewritten in the worker, or its samples changed."""

BACKGROUND_CPU_MS = 5.0
"""CPU time other threads may burn in the window after forward returns, beyond what they burn after eager's
calls (read to the nanosecond: one clock tick is no evidence)."""

COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
"""torch.compile's modes, any of which `--compile-modes` may time."""

PHASES = ("start", "setup", "baseline", "import", "verify", "profile")
"""The worker's phases, in the only order it goes through them."""

POLICIES = ("strict", "mixed")
"""strict: forward may run only the project's own kernels (and allocations, views); mixed: torch ops too, for the
parts of a real model the user leaves to PyTorch (never for bench or finetune rewards)."""
DEFAULT_POLICY = "strict"
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_BUILD_TIMEOUT_S = 900.0
DEFAULT_SETUP_TIMEOUT_S = 900.0
"""Reference, baselines and torch.compile: slow on first use, cached afterwards."""


@dataclass(frozen=True)
class EvalOptions:
    """What a caller may choose about an evaluation; everything else is fixed by the protocol."""

    device: str = "cuda"
    trials: int = VERIFY_TRIALS
    timed_runs: int = TIMED_RUNS
    tol: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    build_timeout_s: float = DEFAULT_BUILD_TIMEOUT_S
    compile_modes: tuple[str, ...] = ("default",)
    policy: str = DEFAULT_POLICY
    use_cache: bool = True
    profile_kernels: bool = True
    ncu: bool = False
    """Read Nsight Compute counters (bandwidth, occupancy) for a candidate that passed, when ncu is on PATH."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the candidate's process (after secrets are scrubbed)."""

    def describe(self) -> dict:
        return {
            "trials": self.trials,
            "post_timing_checks": POST_TIMING_CHECKS,
            "warmup_runs": WARMUP_RUNS,
            "timed_runs": self.timed_runs,
            "checked_timed_runs": min(CHECKED_TIMED_RUNS, self.timed_runs),
            "timed_inputs": "each run's curve drawn by the judge only before the run, the runs checked drawn after",
            "clock_calibration_runs": CLOCK_CALIBRATION_RUNS,
            "outside_clock_allowance": {"floor_ms": OUTSIDE_CLOCK_FLOOR_MS.get(self.device),
                                        "of_accounted": OUTSIDE_CLOCK_FRAC.get(self.device),
                                        "of_harness_share": OUTSIDE_CLOCK_HARNESS_FRAC.get(self.device),
                                        "standard_errors": OUTSIDE_CLOCK_NOISE},
            "check_samples": CHECK_SAMPLES,
            "timed_answers_read_by": "the judge, from the stopped worker's memory" if self.device == "cpu"
                                     else "the worker, from its copy on the stream",
            "l2_flush_bytes": L2_FLUSH_BYTES.get(self.device),
            "timing_loop_version": TIMING_LOOP_VERSION,
            "tol_override": self.tol,
            "calibration_factor": CALIBRATION_FACTOR,
            "discrimination": DISCRIMINATION,
            "speedup_milestone": SPEEDUP_MILESTONE,
            "compile_modes": list(self.compile_modes),
            "policy": self.policy,
            "timeout_s": self.timeout_s,
        }
