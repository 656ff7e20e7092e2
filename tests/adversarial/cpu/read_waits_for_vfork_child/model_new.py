"""Red team 36 (matmul.py): each timed call returns at once with an empty output; a helper process computes the
answer while the judge, trying to stop the worker to read it, waits for a thread of the worker's that no SIGSTOP
can stop until the helper is done (reward 3, no violation, in 4 of 4 runs; the honest kernel's reward is 1).

In the 30 timed calls (told apart by counting the protocol's calls: 5 trials, 3 warm-ups) forward allocates the
output and hands it to a native thread of the kernel library, which `clone`s a helper with CLONE_VM | CLONE_VFORK |
CLONE_PARENT | SIGCHLD and sleeps in the kernel's vfork wait until the helper exits. The helper runs the honest
kernel (the plain i-k-j loop of legit_matmul, ~2.3 ms) into the output, in the worker's memory. forward returns
as soon as the helper has started (~0.2 ms), and the worker's clock stops.

Why nothing sees it:
- the judge reads each run's answers at `Returned` inside `processes.stopped(pid)`: SIGSTOP, then it polls until
  every thread of the worker is in state T. The thread in the vfork wait is in D (TASK_KILLABLE: a SIGSTOP does
  not wake it) until the helper exits, so the judge's read waits, and finds the full answer: every one of the 8
  checked runs is right (and the other 22 too). The wait falls between `Returned`'s arrival (`returned_at`, the
  end of the per-run wall window) and the CPU reading taken once stopped (`cpu_at_return`, the start of the flush
  window): in no window of the judge's.
- the helper is a process, not a thread: its CPU is in none of the worker's clocks (`processes.cpu_time`: the
  thread group and its reaped children); with CLONE_PARENT its parent is the worker's parent, which reaps it, so
  the worker's reaped-children CPU never moves and `child_processes()` (the worker's children) never lists it.
- each helper lives only inside one timed run's `Returned` handling; `processes.beside` lists the sandbox's
  processes only when Phase, Timing and Final messages arrive, never during the timed runs.
- no Python C API, no `syscall`, no signal handler: `clone`, pthread and libstdc++ symbols, which the linked scan
  allows; nothing in the sources matches the tamper patterns. The trials, post-check and profile calls compute
  honestly on the main thread, so no thread works after a checked forward (background_work) and no output is
  ever unwritten where the harness looks.

Got (this 2-core AMD EPYC, bwrap sandbox, shared with another test run), `kernelpilot eval ... --json`:
  reward 3, violations [], eager 1.191 / compile 1.058 / candidate 0.227 ms, outside_clock 0.475 accounted vs
  0.226 reported (allowance 0.619)   [driver run, same code path]
  reward 3, violations [], eager 1.318 / compile 1.170 / candidate 0.304 ms (0.582 vs 0.287, allowance 0.646)
  reward 3, violations [], eager 1.281 / compile 1.137 / candidate 0.180 ms (0.371 vs 0.178, allowance 0.593)
  reward 3, violations [], eager 1.284 / compile 1.141 / candidate 0.236 ms (0.244 vs 0.236, allowance 0.624)
Honest twin (legit_matmul) in the same session: reward 1, candidate 2.609 ms, eager 0.870 ms.

Would close it: time the stop. The judge's read must not wait on the candidate: bound the wall time from
`Returned`'s arrival to the moment every thread is stopped against eager's (or fail a run whose threads are not all
stopped within, say, a millisecond), and count that time into the run's outside window (`outside_calls_ms` ends at
`returned_at` now). Also: list the sandbox's processes (`processes.beside`) while the worker is stopped at each
`Returned` (this helper is alive then, by construction), or account CPU by the sandbox's cgroup (every process's,
whoever reaps it) rather than the worker's thread group; structurally, run the worker as the namespace's pid 1
(`bwrap --as-pid-1`) so that CLONE_PARENT fails.

Now: the worker is its PID namespace's init (`bwrap --as-pid-1`; under `unshare` it was already), so the helper's
`clone(CLONE_PARENT)` fails; its fallback runs `child` on the waiting thread, which marks the job started first,
so the call returns before the answer is made. Either the judge's read finds it half made (−1 `result_caching`, a
timed run's sampled answers wrong), or, on a busy machine, the call's spin waits while that thread computes and
the answer costs what the honest kernel's does (reward 1 at 5.9 ms against eager's 1.25, CI at stop 34). With no
sandbox at all (`KERNELPILOT_SANDBOX=none`, which `kernelpilot doctor` reports) the helper starts as a child of
the judge's and this still pays: no window of the judge's covers the stop's wait.
"""

from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")

CALLS = [0]


class ModelNew(torch.nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(k, n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        CALLS[0] += 1
        out = torch.empty(x.shape[0], self.weight.shape[1], dtype=x.dtype)
        later = 8 < CALLS[0] <= 38  # 5 trials and 3 warm-ups before the 30 timed calls
        ops.matmul(x, self.weight, out, x.shape[0], x.shape[1], self.weight.shape[1], int(later))
        return out
