"""The worker's process starts, put to the judge (`process_gate`): a real filter in a real child process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from kernelpilot.harness.process_gate import GATE_FD_ENV, ProcessGate, probe

pytestmark = pytest.mark.skipif(probe() is not None, reason="no seccomp user notification here")

CHILD = r'''
from kernelpilot.harness.process_gate import hand_process_starts_to_judge
hand_process_starts_to_judge()
import ctypes, os, subprocess, sys, threading

def attempts():
    try:
        started = subprocess.run(["true"]).returncode == 0
    except OSError as error:
        started = error.errno
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    libc = ctypes.CDLL(None, use_errno=True)
    own_filter = libc.syscall(317, 1, 0, 0) if os.uname().machine == "x86_64" else -1
    return f"{started} {own_filter}"

print(attempts(), flush=True)
sys.stdin.readline()
print(attempts(), flush=True)
'''


def test_starts_pass_until_the_gate_shuts_then_are_refused_and_recorded():
    judge_end, worker_end = socket.socketpair()
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             pass_fds=(worker_end.fileno(),), env={**os.environ, GATE_FD_ENV: str(worker_end.fileno())})
    worker_end.close()
    gate = ProcessGate(judge_end)
    try:
        before = child.stdout.readline().split()
        gate.shut()
        child.stdin.write("\n")
        child.stdin.flush()
        after = child.stdout.readline().split()
        child.wait(timeout=60)
    finally:
        gate.end()
    assert before[0] == "True"  # a compiler may run while the model is built
    assert after[0] == str(1)  # EPERM: the candidate's helper never starts
    assert before[1] == after[1] == "-1"  # no filter of the candidate's own, whose listener would answer instead
    assert gate.unavailable is None
    assert gate.refused and all(f"{child.pid} (python" in start for start in gate.refused)
