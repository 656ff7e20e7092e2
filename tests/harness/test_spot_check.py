"""The judge's spot check of a CPU timed run: the answers read out of the worker's memory, the worker stopped."""

import dataclasses
import json
import os
import subprocess
import sys
import threading

import pytest
import torch

from kernelpilot.harness import processes
from kernelpilot.harness.spot_check import OutputLayout, UnreadableOutput, layout_of, read_samples, sample_positions
from kernelpilot.harness.worker import sample_outputs

HOLDER = r"""
import dataclasses, json, sys, torch
from kernelpilot.harness.spot_check import layout_of
base = torch.arange(4 * 6 * 5, dtype=torch.float64).reshape(4, 6, 5) - 50.5
complex_base = torch.complex(base, -base).to(torch.complex64)
outputs = [base.permute(2, 0, 1)[1:, :, 2:], base.neg()._neg_view(), complex_base.conj(),
           base[:, :0], torch.ones(3, dtype=torch.int32).expand(4, 3)]
print(json.dumps([dataclasses.asdict(layout_of(out)) for out in outputs]), flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def holder():
    """Another process holding five awkward outputs (a permuted slice, a lazily negated view, a conjugated
    complex one, an empty one, a broadcast), and the layouts its harness would report."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    layouts = [OutputLayout(**{**fields, "shape": tuple(fields["shape"]), "stride": tuple(fields["stride"])})
               for fields in json.loads(process.stdout.readline())]
    yield process.pid, layouts
    process.stdin.write("\n")
    process.stdin.close()
    process.wait(timeout=30)


def test_the_judge_reads_the_values_the_worker_would_sample_at_the_same_positions(holder):
    pid, layouts = holder
    base = torch.arange(4 * 6 * 5, dtype=torch.float64).reshape(4, 6, 5) - 50.5
    complex_base = torch.complex(base, -base).to(torch.complex64)
    outputs = [base.permute(2, 0, 1)[1:, :, 2:], base.neg()._neg_view(), complex_base.conj(),
               base[:, :0], torch.ones(3, dtype=torch.int32).expand(4, 3)]
    with processes.stopped(pid):
        assert processes._all_stopped(pid)
        samples, shapes = read_samples(pid, layouts, seed=1234)
    assert shapes == [tuple(out.shape) for out in outputs]
    for got, want in zip(samples, sample_outputs(outputs, 1234)):
        assert got.dtype == want.dtype and torch.equal(got, want)
    assert not processes._all_stopped(pid)  # continued after


def test_an_address_the_worker_does_not_have_is_unreadable_not_a_value(holder):
    pid, layouts = holder
    wrong = dataclasses.replace(layouts[0], address=8)
    with processes.stopped(pid), pytest.raises(UnreadableOutput, match="bytes read"):
        read_samples(pid, [wrong], seed=1)


def test_a_non_tensor_output_has_no_layout_and_no_sample():
    assert layout_of(torch.nn.Parameter(torch.ones(2))) is None  # a subclass: never touched
    assert layout_of(3.0) is None
    assert read_samples(os.getpid(), [None], seed=1) == ([None], [None])


def test_positions_cover_small_outputs_and_cap_large_ones():
    generator = torch.Generator().manual_seed(0)
    assert len(sample_positions(0, generator)) == 0
    small = sample_positions(10, generator)
    assert len(small) == 10 and int(small.max()) < 10
    assert len(sample_positions(10**9, generator)) == 4096


def test_a_stopped_process_runs_no_thread_until_continued():
    """What the judge reads while a worker is stopped no thread of the worker's can change meanwhile."""
    child = subprocess.Popen([sys.executable, "-c", "import threading, time\n"
                              "counter = [0]\n"
                              "def spin():\n"
                              "    while True: counter[0] += 1\n"
                              "threading.Thread(target=spin, daemon=True).start()\n"
                              "time.sleep(60)\n"])
    try:
        threading.Event().wait(0.3)
        with processes.stopped(child.pid):
            before = processes.cpu_time(child.pid).all_threads
            threading.Event().wait(0.2)
            assert processes.cpu_time(child.pid).all_threads == before
        threading.Event().wait(0.2)
        assert processes.cpu_time(child.pid).all_threads > before
    finally:
        child.kill()
        child.wait()
