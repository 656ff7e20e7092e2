"""The timing loop's own cost, run for run the same for eager and for the candidate."""

import json
import subprocess
import sys

LOOP = r"""
import collections, json, sys, torch
from kernelpilot.harness.audit import mark_call, watching_calls
from kernelpilot.harness.timing import CacheFlusher, FreshInputs, time_calls
model = torch.nn.ReLU()
inputs, flush = FreshInputs([[torch.randn(64, 64)]], 1), CacheFlusher("cpu", 1 << 16)
events, counting = collections.Counter(), [False]
sys.addaudithook(lambda event, args: events.update([event]) if counting[0] else None)
with torch.no_grad(), watching_calls():
    time_calls(model, inputs, "cpu", 2, 5, flush, around=mark_call)  # first calls import what they need
    counting[0] = True
    time_calls(model, inputs, "cpu", 2, 40, flush, around=mark_call)
    counting[0] = False
print(json.dumps(events))
"""


def test_the_timing_loop_raises_no_audit_events():
    """The candidate's import adds an audit hook (`reach`) that runs on every audit event: events the loop itself
    raised (torch.manual_seed formatted the stack for backends never started) cost the candidate's runs alone,
    and the judge's clock read that as the candidate's time (`unaccounted_time` for a legitimate fast kernel)."""
    done = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True, check=True)
    events = json.loads(done.stdout.strip().splitlines()[-1])
    assert sum(events.values()) <= 2, events


def test_work_hidden_in_the_fill_in_some_runs_and_in_the_call_in_others_shows_in_every_runs_sum():
    """Red team 38 hid each answer before the go in a third of the runs and after it (on the main thread, before
    the worker's timer) in another: each window's median was an honest run. The per-run sum is not."""
    from kernelpilot.harness.observations import TimedLoop
    from kernelpilot.harness.processes import CpuTime

    loop, reported, hidden, now = TimedLoop(), [], 2.0, 0.0
    for run in range(30):
        fill = 0.5 + (hidden if run % 3 == 1 else 0.0)
        now += fill
        loop.cpu_at_go.append(CpuTime(now, now, 0.0))
        took = 0.2 if run % 3 else 2.2  # a third computed in the call, honestly
        now += took + (hidden if run % 3 == 2 else 0.0)
        loop.cpu_at_return.append(CpuTime(now, now, 0.0))
        reported.append(took)
        now += 1.0  # the flush
        loop.cpu_at_report.append(CpuTime(now, now, 0.0))
    runs = loop.outside_calls_ms(tuple(reported), cores=2)
    assert runs is not None and len(runs) == 29
    assert sorted(runs)[len(runs) // 2] >= 0.5 + hidden - 1e-9  # the median run hid its answer
    honest = [r for i, r in enumerate(runs, start=1) if i % 3 == 0]
    assert all(abs(r - 0.5) < 1e-9 for r in honest)  # an honest run: its fill alone


def test_a_main_thread_that_waits_for_its_other_threads_is_no_credit():
    """Eager on two busy cores: its main thread waits at a parallel op's barrier, its CPU far below the call's
    time. Counted as negative, eager's median sum fell to -4 ms and every honest candidate got `unaccounted_time`
    (red team 40)."""
    from kernelpilot.harness.observations import TimedLoop
    from kernelpilot.harness.processes import CpuTime

    loop, reported, main, others = TimedLoop(), [], 0.0, 0.0
    for _ in range(10):
        main += 0.5  # the fill
        loop.cpu_at_go.append(CpuTime(main + others, main, 0.0))
        main, others = main + 1.0, others + 1.0  # the call: 5 ms, its main thread's CPU 1 ms, its other thread's 1
        loop.cpu_at_return.append(CpuTime(main + others, main, 0.0))
        reported.append(5.0)
        main += 1.0  # the flush
        loop.cpu_at_report.append(CpuTime(main + others, main, 0.0))
    runs = loop.outside_calls_ms(tuple(reported), cores=2)
    assert runs is not None and all(abs(run - 0.5) < 1e-9 for run in runs)  # the fill alone
