"""A one-shot `kernelpilot eval` starts its judge's worker and keeper before it imports torch itself, so their
interpreters, torch and device contexts come up while its own import runs (issue 15's one-shot target)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from kernelpilot.commands.evaluate import likely_device
from kernelpilot.harness.worker_process import discard_worker, start_worker
from kernelpilot.harness.protocol import EvalOptions
worker = start_worker(EvalOptions(device=likely_device()))
started_before_torch = "torch" not in sys.modules
from kernelpilot.harness import evaluate
discard_worker(worker)
print(started_before_torch, "torch" in sys.modules, worker.process.returncode is not None)
"""


def test_the_judges_processes_start_before_the_cli_imports_torch():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]
