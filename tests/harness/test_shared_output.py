"""An output on its way from the worker to the judge's keeper (CPU: a file in the scratch folder)."""

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest
import torch

from kernelpilot.harness.shared_output import SharedOutput, copied, take_snapshot

CPU = torch.device("cpu")


def test_the_keeper_gets_the_values_and_the_layout_the_worker_shared(tmp_path):
    transposed = torch.arange(24, dtype=torch.float32).reshape(4, 6).t()  # column-major, as eager may lay it out
    shared = take_snapshot(transposed, tmp_path / "out-1-0.bin").shared
    assert (shared.shape, shared.stride) == ((6, 4), (1, 6))
    got = copied(shared, tmp_path, CPU)
    assert torch.equal(got, transposed) and got.is_contiguous()
    assert not (tmp_path / "out-1-0.bin").exists()  # read once, then gone


def test_the_keeper_gets_the_values_at_the_snapshot_not_later_ones(tmp_path):
    output = torch.zeros(1000)
    shared = take_snapshot(output, tmp_path / "out-5-0.bin").shared
    output.fill_(1.0)  # a thread of the candidate's finishing the answer after forward returned
    assert torch.equal(copied(shared, tmp_path, CPU), torch.zeros(1000))


@pytest.mark.parametrize("output", [torch.arange(80.0).reshape(10, 8)[3:], torch.arange(8.0).expand(5, 8),
                                    torch._neg_view(torch.arange(1.0, 9.0))],
                         ids=["view-with-offset", "broadcast", "negated-view"])
def test_views_and_broadcasts_arrive_with_their_values(tmp_path, output):
    shared = take_snapshot(output, tmp_path / "out-6-0.bin").shared
    assert shared.nbytes == output.numel() * output.element_size()
    assert torch.equal(copied(shared, tmp_path, CPU), output)


def test_a_file_rewritten_after_it_was_shared_is_refused(tmp_path):
    shared = take_snapshot(torch.zeros(1000), tmp_path / "out-2-0.bin").shared
    torch.ones(1000).numpy().tofile(tmp_path / "out-2-0.bin")
    with pytest.raises(ValueError, match="changed after the worker shared it"):
        copied(shared, tmp_path, CPU)


def test_a_link_in_place_of_the_file_is_never_followed(tmp_path):
    answer = torch.randn(256)
    shared = take_snapshot(answer, tmp_path / "out-3-0.bin").shared
    os.replace(tmp_path / "out-3-0.bin", tmp_path / "elsewhere.bin")
    (tmp_path / "out-3-0.bin").symlink_to(tmp_path / "elsewhere.bin")
    with pytest.raises(OSError):
        copied(shared, tmp_path, CPU)


@pytest.mark.parametrize("change", [{"nbytes": 8}, {"handle": "../out-4-0.bin"}, {"dtype": "not_a_dtype"},
                                    {"stride": (-1,)}])
def test_a_description_that_does_not_fit_its_layout_is_refused(tmp_path, change):
    shared = take_snapshot(torch.randn(64), tmp_path / "out-4-0.bin").shared
    with pytest.raises(ValueError):
        copied(replace(shared, **change), tmp_path, CPU)


EXPORTER = r"""
import dataclasses, json, sys
import torch
from kernelpilot.harness.shared_output import take_snapshot
base = torch.randn(64, 96, device="cuda")
snapshot = take_snapshot(base.t()[3:], None)  # strided, as eager may lay an output out
print(json.dumps([dataclasses.asdict(snapshot.shared), float(snapshot.tensor.double().sum())]),
      flush=True)
sys.stdin.readline()  # kept until the importer has copied it, as the worker keeps it until the judge's word
snapshot.release()
"""


@pytest.mark.gpu
def test_a_cuda_output_reaches_another_process_by_ipc_and_is_copied_out(tmp_path):
    exporter = subprocess.Popen([sys.executable, "-c", EXPORTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)
    try:
        described, total = json.loads(exporter.stdout.readline())
        shared = SharedOutput(**{**described, "shape": tuple(described["shape"]),
                                 "stride": tuple(described["stride"])})
        got = copied(shared, tmp_path, torch.device("cuda", 0))
    finally:
        exporter.communicate("\n", timeout=60)
    assert got.shape == (93, 64) and got.is_contiguous() and got.device.type == "cuda"
    assert abs(float(got.double().sum()) - total) <= 1e-6 * max(1.0, abs(total))
