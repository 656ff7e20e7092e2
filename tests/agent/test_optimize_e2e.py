"""`kernelpilot optimize --headless` end to end on the CPU: the shipped replay transcript, real builds and
evaluations, a budget stop, `--resume`, the git workspace, the log, and the export of the best candidate."""

from __future__ import annotations

import importlib.util
import json
import sys

import git
import pytest
import torch
from agent_helpers import TASK, TRANSCRIPT, kernelpilot

from kernelpilot.cli import main
from kernelpilot.session.events import Evaluation, LLMTurn, SessionEnded, SessionStarted
from kernelpilot.session.log import read_events
from kernelpilot.session.store import LOG_NAME, WORKSPACE_NAME


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """Two turns (the failing candidate), stopped by --max-turns; then --resume plays the rest."""
    cwd = tmp_path_factory.mktemp("project")
    first = kernelpilot("optimize", str(TASK), "--model", f"replay:{TRANSCRIPT}", "--headless", "--max-turns", "2",
                        cwd=cwd)
    assert first.returncode == 0, first.stderr
    before = json.loads(first.stdout)
    resumed = kernelpilot("optimize", "--resume", before["session_id"], "--model", f"replay:{TRANSCRIPT}",
                          "--headless", cwd=cwd)
    assert resumed.returncode == 0, resumed.stderr
    directory = cwd / ".kernelpilot" / "sessions" / before["session_id"]
    return {"cwd": cwd, "id": before["session_id"], "before": before, "after": json.loads(resumed.stdout),
            "dir": directory, "events": read_events(directory / LOG_NAME), "stderr": first.stderr + resumed.stderr}


def test_turn_budget_stops_after_the_failing_candidate(session):
    before = session["before"]
    assert before["reason"] == "max_turns" and before["turns"] == 2
    assert [c["status"] for c in before["candidates"]] == ["build_failed"]
    assert before["best"] is None


def test_resume_continues_to_a_fused_kernel_that_beats_eager(session):
    after = session["after"]
    assert after["session_id"] == session["id"] and after["reason"] == "done" and after["turns"] == 4
    failing, passing = after["candidates"]
    assert failing["status"] == "build_failed" and failing["reward"] == -1
    assert passing["status"] == "correct" and passing["reward"] >= 2, passing
    assert after["best"]["candidate_id"] == passing["candidate_id"]


def test_log_records_the_whole_session_once(session):
    events = session["events"]
    assert sum(isinstance(e, SessionStarted) for e in events) == 1
    assert [e.turn for e in events if isinstance(e, LLMTurn)] == [1, 2, 3, 4]
    assert [e.reason for e in events if isinstance(e, SessionEnded)] == ["max_turns", "done"]
    evaluations = [e for e in events if isinstance(e, Evaluation)]
    assert [e.result.reward >= 2 for e in evaluations] == [False, True]
    assert "error" in evaluations[0].result.build_log


def test_each_evaluated_candidate_is_a_commit_with_its_result(session):
    repo = git.Repo(session["dir"] / WORKSPACE_NAME)
    for event in (e for e in session["events"] if isinstance(e, Evaluation)):
        commit = repo.commit(event.commit)
        assert "kernels/relu_bias_scale.cpp" in [b.path for b in commit.tree.traverse()]
        assert json.loads(repo.git.notes("show", event.commit))["reward"] == event.result.reward
    assert "bias[c];" in repo.git.diff(*(e.commit for e in session["events"] if isinstance(e, Evaluation)))


def test_resuming_a_finished_session_runs_nothing_and_keeps_its_end(session):
    log = session["dir"] / LOG_NAME
    ended = log.read_bytes()
    again = kernelpilot("optimize", "--resume", session["id"], "--model", f"replay:{TRANSCRIPT}", "--headless",
                        cwd=session["cwd"])
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["reason"] == "done" and summary["best"] == session["after"]["best"]
    assert log.read_bytes() == ended, "no second session_ended, no new event"


def test_progress_goes_to_stderr(session):
    assert "candidate 1: build_failed" in session["stderr"]
    assert "session ended: done" in session["stderr"]


def sessions(session, *args: str) -> int:
    """`kernelpilot sessions ...` in this process (the CLI's own entry point; saves a torch import each)."""
    return main(["sessions", *args, "--root", str(session["dir"].parent)])


def test_best_candidate_exports_as_a_single_file_that_matches_the_task(session, tmp_path, capsys):
    out = tmp_path / "relu_bias_new.py"
    assert sessions(session, "export", session["id"], "--out", str(out)) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert "load_kernel_sources(SOURCES)" in out.read_text()
    exported = _import(out, "exported_relu_bias")
    task = _import(TASK, "relu_bias_task")
    reference = task.Model(*task.get_init_inputs())
    candidate = exported.ModelNew(*task.get_init_inputs())
    candidate.load_state_dict(reference.state_dict())
    x = torch.randn(64, task.COLS)
    torch.testing.assert_close(candidate(x), reference(x))


def test_best_candidate_exports_as_a_workspace(session, tmp_path):
    assert sessions(session, "export", session["id"], "--format", "workspace", "--out", str(tmp_path / "ws")) == 0
    assert (tmp_path / "ws" / "model_new.py").is_file()
    assert "bias[c];" in (tmp_path / "ws" / "kernels" / "relu_bias_scale.cpp").read_text()


def test_a_chosen_candidate_exports_even_when_it_failed(session, tmp_path):
    out = tmp_path / "ws1"
    assert sessions(session, "export", session["id"], "--candidate", "1", "--format", "workspace", "--out", str(out)) == 0
    assert "bias[c];" not in (out / "kernels" / "relu_bias_scale.cpp").read_text()  # the one that failed to build
    assert sessions(session, "export", session["id"], "--candidate", "9", "--out", str(tmp_path / "x.py")) == 2


def test_sessions_list_and_show(session, capsys):
    assert sessions(session, "list") == 0
    assert session["id"] in capsys.readouterr().out
    assert sessions(session, "show", session["id"]) == 0
    shown = capsys.readouterr().out
    assert "build_failed" in shown and "correct" in shown and "ended    done" in shown


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
