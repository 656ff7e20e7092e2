"""The sandbox's /proc: read-only for candidates (no code rewritten through /proc/PID/mem), writable where
the NVIDIA driver must start (on an H100 a read-only /proc failed CUDA's init with error 304)."""

from __future__ import annotations

import subprocess

import pytest

from kernelpilot.harness.sandbox import isolation_kind, sandboxed

WRITE_PROC = ["sh", "-c", "echo probe > /proc/self/comm && echo written"]


@pytest.fixture
def read_only_sandbox():
    kind = isolation_kind()
    if kind != "bwrap" and not kind.endswith("+ro"):
        pytest.skip(f"no read-only sandbox here ({kind})")


def test_proc_is_read_only_for_candidates(read_only_sandbox, tmp_path):
    done = subprocess.run(sandboxed(WRITE_PROC, writable=[tmp_path]), capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "written" not in done.stdout, done.stdout + done.stderr


def test_proc_stays_writable_where_the_gpu_driver_starts(read_only_sandbox, tmp_path):
    done = subprocess.run(sandboxed(WRITE_PROC, writable=[tmp_path], proc_read_only=False), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "written" in done.stdout, done.stdout + done.stderr
