"""Promises the README makes about setting up and checking a fresh machine."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    setup = ROOT.joinpath("README.md").read_text().split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", setup, re.S)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_the_test_one():
    commands = readme_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    main_job, tests = commands
    assert "kernelpilot optimize examples/" in main_job
    assert tests in ROOT.joinpath(".ci", "run").read_text()


def test_main_job_example_files_exist():
    main_job = readme_commands()[0]
    for path in re.findall(r"(examples/\S+)", main_job):
        assert (ROOT / path.split(":")[-1]).exists(), path


def test_doctor_reports_each_part_and_how_to_fix_it():
    proc = subprocess.run([sys.executable, "-m", "kernelpilot", "doctor"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    for part in ("GPU", "torch CUDA", "nvcc", "g++", "sandbox", "cache"):
        assert part in proc.stdout
    if "missing" in proc.stdout:
        assert "fix:" in proc.stdout


def test_unbuilt_verbs_say_so_in_one_line_with_exit_two():
    proc = subprocess.run([sys.executable, "-m", "kernelpilot", "finetune", "sessions/"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert "not built yet" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
