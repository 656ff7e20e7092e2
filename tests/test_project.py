"""Promises the README makes about setting up and checking a fresh machine."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
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


def test_a_built_wheel_ships_the_skills_and_themes(tmp_path: Path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("kernelpilot", "skills", "themes"):
        shutil.copytree(ROOT / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            str(source), "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    wheel = next((tmp_path / "dist").glob("kernelpilot-*.whl"))
    target = tmp_path / "installed"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    probe = ("import kernelpilot.agent.skills as s, kernelpilot.tui.themes as t; "
             "print(s.SHIPPED.joinpath('cuda', 'SKILL.md').is_file(), sorted(p.name for p in t.SHIPPED_THEMES.iterdir()), "
             "s.SHIPPED)")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(target)}, cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith("True ['kernelpilot-dark.toml', 'kernelpilot-high-contrast.toml', "
                                   "'kernelpilot-light.toml']"), found.stdout
    assert str(target) in found.stdout  # read from the installed wheel, not from this repository


def test_readme_names_the_one_verb_that_has_no_cache():
    """A flag only `eval` has, said in a section about every verb: each mention names the verbs that take it."""
    from kernelpilot.cli import build_parser

    verbs = next(action.choices for action in build_parser()._actions if action.dest == "verb")
    owners = [verb for verb, parser in verbs.items() if "--no-cache" in parser.format_help()]
    spans = [span for span in re.findall(r"`([^`]*)`", ROOT.joinpath("README.md").read_text()) if "--no-cache" in span]
    assert spans and all(span.startswith(tuple(f"kernelpilot {verb} " for verb in owners)) for span in spans), spans


def test_readme_gives_the_status_and_violations_of_reference_as_candidate():
    """What `bench --reference-as-candidate` gives on the CPU (strict: both guards; mixed: the second alone)."""
    readme = " ".join(ROOT.joinpath("README.md").read_text().split())
    assert ("its status is `guard_violation`, with the violations `op_audit`, since its forward is PyTorch's own ops, "
            "and `kernel_not_launched`") in readme
    assert "its verdict is `kernel_not_launched`" not in readme
