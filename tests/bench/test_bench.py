"""`kernelpilot bench` end to end on the CPU backend: real builds and evaluations of a small suite in
KernelBench's layout, its statuses and rates, the JSON contract, the files under --out, going on from an
earlier run, and bad input."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_helpers import EXPECTED, REPO, bench, blocking, make_suite

from kernelpilot.cli import main

CONTRACT_RESULT = {"task", "level", "status", "reward", "speedup_vs_eager", "speedup_vs_compile", "violations",
                   "error", "seconds"}
CONTRACT_SUMMARY = {"tasks", "pass_rate", "fast_1_eager", "fast_1_compile", "geomean_speedup_eager",
                    "geomean_speedup_compile", "mean_reward", "by_level"}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return make_suite(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="module")
def run(suite, tmp_path_factory):
    """One bench over the suite, in a process that cannot import textual, litellm, gitpython or ray."""
    folder = tmp_path_factory.mktemp("run")
    tasks, solutions = suite
    done = bench(str(tasks), "--solutions", str(solutions), "--device", "cpu", "--json", "--out", str(folder / "out"),
                 env=blocking(folder / "site"))
    assert done.returncode == 0, done.stderr[-3000:]
    return {"done": done, "data": json.loads(done.stdout), "out": folder / "out", "folder": folder}


def test_each_task_gets_its_status(run):
    results = {r["task"]: r for r in run["data"]["results"]}
    assert {name: r["status"] for name, r in results.items()} == EXPECTED
    assert results["level1/1_relu_bias"]["reward"] >= 1 and results["level1/1_relu_bias"]["speedup_vs_eager"] > 0
    assert [v["check"] for v in results["level1/3_relu_bias"]["violations"]] == ["op_audit"]
    assert "elements differ" in results["level1/2_relu_bias"]["error"]
    assert "does not define" in results["level2/2_broken"]["error"]
    assert all(r["reward"] == -1 for name, r in results.items() if name != "level1/1_relu_bias")
    assert all(r["seconds"] > 1 for name, r in results.items() if name.startswith("level1/"))


def test_rates_count_the_task_that_cannot_load_apart(run):
    summary = run["data"]["summary"]
    assert summary["tasks"] == 5 and summary["task_errors"] == 1 and summary["judged"] == 4
    assert summary["pass_rate"] == 0.25
    correct = next(r for r in run["data"]["results"] if r["status"] == "correct")
    assert summary["fast_1_eager"] == (0.25 if correct["speedup_vs_eager"] > 1 else 0.0)
    assert summary["geomean_speedup_eager"] == pytest.approx(correct["speedup_vs_eager"], rel=1e-3)
    assert summary["mean_reward"] == pytest.approx((correct["reward"] - 3) / 4)
    assert summary["violations"] == {"op_audit": 1}
    level1, level2 = summary["by_level"]["1"], summary["by_level"]["2"]
    assert level1["pass_rate"] == pytest.approx(1 / 3, abs=1e-3) and level1["task_errors"] == 0
    assert level2["judged"] == 1 and level2["pass_rate"] == 0.0 and level2["task_errors"] == 1


def test_json_is_one_object_with_the_contract(run):
    data = json.loads(run["done"].stdout)  # the whole of stdout: one object
    assert data["suite"] and all(CONTRACT_RESULT <= set(r) for r in data["results"])
    assert CONTRACT_SUMMARY <= set(data["summary"]) and data["complete"] is True
    assert set(data["summary"]["fast_p_eager"]) == {"1", "1.5", "2"}
    assert "[5/5] " in run["done"].stderr  # off a terminal, progress is a line per verdict, on stderr


def test_out_holds_the_journal_and_the_reports(run):
    out = run["out"]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task"] for line in lines) == sorted(EXPECTED)
    assert json.loads((out / "results.json").read_text()) == run["data"]
    report = (out / "report.md").read_text()
    assert "| level 1 |" in report and "op_audit" in report and "level2/2_broken" in report
    assert (out / "speedups.png").stat().st_size > 1000


def test_rerun_with_the_same_out_redoes_nothing(run, suite):
    """A finished run re-run judges nothing again; without matplotlib the plot is skipped with a note."""
    tasks, solutions = suite
    (run["out"] / "speedups.png").unlink()
    started = time.perf_counter()
    again = bench(str(tasks), "--solutions", str(solutions), "--device", "cpu", "--json", "--out", str(run["out"]),
                  "--resume", env=blocking(run["folder"] / "site-noplot", ("textual", "litellm", "git", "ray",
                                                                            "matplotlib")))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["results"] == run["data"]["results"]
    assert len((run["out"] / "results.jsonl").read_text().splitlines()) == 5
    assert "5 of 5 tasks done" in again.stderr and "speedups.png skipped" in again.stderr
    assert not (run["out"] / "speedups.png").exists()
    assert time.perf_counter() - started < 30


def test_resume_drops_a_torn_line_and_finishes_only_what_is_missing(run, suite, tmp_path):
    """A kill while a line was written leaves it torn: it is cut off, and only the tasks without a line run."""
    tasks, solutions = suite
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text((run["out"] / "run.json").read_text())
    kept = [line for line in (run["out"] / "results.jsonl").read_text().splitlines()
            if json.loads(line)["task"].startswith("level1/")]
    (out / "results.jsonl").write_text("\n".join(kept) + '\n{"task": "level2/1_relu_b')
    again = bench(str(tasks), "--solutions", str(solutions), "--device", "cpu", "--json", "--out", str(out))
    assert again.returncode == 0, again.stderr
    lines = (out / "results.jsonl").read_text().splitlines()
    assert lines[:3] == kept and len(lines) == 5
    assert {json.loads(line)["status"] for line in lines[3:]} == {"missing", "task_error"}


def test_another_runs_out_is_refused(run, suite):
    tasks, _ = suite
    code = main(["bench", str(tasks), "--reference-as-candidate", "--device", "cpu", "--out", str(run["out"])])
    assert code == 2


@pytest.mark.parametrize("args, message", [
    (["/nonexistent/suite", "--solutions", "."], "suite not found"),
    (["SUITE", "--solutions", "SOLUTIONS", "--model", "replay:x.json"], "give one of"),
    (["SUITE"], "give one of"),
    (["SUITE", "--solutions", "SOLUTIONS", "--levels", "1,two"], "--levels takes"),
    (["SUITE", "--solutions", "SOLUTIONS", "--p", "0"], "--p takes"),
    (["SUITE", "--solutions", "SOLUTIONS", "--tasks", "nothing*"], "no task of"),
    (["SUITE", "--solutions", "SOLUTIONS", "--ray-address", "auto"], "--ray-address needs --executor ray"),
    (["SUITE", "--solutions", "SOLUTIONS", "--resume"], "give --out"),
])
def test_bad_input_is_one_line_and_exit_2(suite, capsys, args, message):
    tasks, solutions = suite
    argv = [str(tasks) if a == "SUITE" else str(solutions) if a == "SOLUTIONS" else a for a in args]
    assert main(["bench", *argv, "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_an_out_that_is_a_file_is_one_line_and_exit_2_and_the_file_is_kept(suite, capsys, tmp_path):
    tasks, solutions = suite
    taken = tmp_path / "results.json"
    taken.write_text("kept\n")
    assert main(["bench", str(tasks), "--solutions", str(solutions), "--device", "cpu", "--out", str(taken)]) == 2
    assert capsys.readouterr().err == f"kernelpilot: --out {taken}: is a file, not a folder\n"
    assert taken.read_text() == "kept\n"


def wait_for_first_verdict(journal: Path, process: subprocess.Popen) -> None:
    """Until the running bench has journaled one task (it must not end first)."""
    deadline = time.monotonic() + 300
    while not (journal.is_file() and journal.read_text().count("\n") >= 1):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.2)


@pytest.mark.slow
def test_resume_after_a_kill_does_not_redo_finished_tasks(suite, tmp_path):
    """Killed (SIGKILL) once its first verdict is on disk, then resumed: that verdict is kept as it was."""
    tasks, solutions = suite
    out = tmp_path / "out"
    args = [str(tasks), "--solutions", str(solutions), "--device", "cpu", "--out", str(out), "--tasks", "level1/*"]
    process = subprocess.Popen([sys.executable, "-m", "kernelpilot.cli", "bench", *args], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = out / "results.jsonl"
    wait_for_first_verdict(journal, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    first = journal.read_text().splitlines()
    resumed = bench(*args, "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    lines = journal.read_text().splitlines()
    assert lines[:len(first)] == first and len(lines) == 3
    assert sorted(json.loads(line)["task"] for line in lines) == sorted(n for n in EXPECTED if n.startswith("level1/"))
    assert f"{len(first)} of 3 tasks done" in resumed.stderr


@pytest.mark.slow
def test_ctrl_c_lets_the_evaluation_in_flight_finish_and_reports(suite, tmp_path):
    tasks, solutions = suite
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "kernelpilot.cli", "bench", str(tasks), "--solutions",
                                str(solutions), "--device", "cpu", "--out", str(out), "--json"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    journal = out / "results.jsonl"
    wait_for_first_verdict(journal, process)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    data = json.loads(stdout)
    assert data["complete"] is False and [r["status"] for r in data["results"]] == ["correct", "wrong"]
    assert "1 evaluation(s) in flight finish first" in stderr
    assert len(journal.read_text().splitlines()) == 2 and "incomplete run" in (out / "report.md").read_text()
