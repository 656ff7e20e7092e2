"""`kernelpilot optimize --headless` end to end on the CPU: the shipped replay transcript, real builds and
evaluations, a budget stop, `--resume`, the git workspace, the log, and the export of the best candidate."""

from __future__ import annotations

import importlib.util
import json
import sys

import git
import pytest
import torch

from kernelpilot.session.events import Evaluation, LLMTurn, SessionEnded, SessionStarted
from kernelpilot.session.log import read_events
from kernelpilot.session.store import LOG_NAME, WORKSPACE_NAME

from agent_helpers import TASK, TRANSCRIPT, kernelpilot


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


def test_progress_goes_to_stderr(session):
    assert "candidate 1: build_failed" in session["stderr"]
    assert "session ended: done" in session["stderr"]


def test_best_candidate_exports_as_a_single_file_that_matches_the_task(session, tmp_path):
    out = tmp_path / "relu_bias_new.py"
    done = kernelpilot("sessions", "export", session["id"], "--out", str(out), cwd=session["cwd"])
    assert done.returncode == 0, done.stderr
    assert "load_kernel_sources(SOURCES)" in out.read_text()
    exported = _import(out, "exported_relu_bias")
    task = _import(TASK, "relu_bias_task")
    reference = task.Model(*task.get_init_inputs())
    candidate = exported.ModelNew(*task.get_init_inputs())
    candidate.load_state_dict(reference.state_dict())
    x = torch.randn(64, task.COLS)
    torch.testing.assert_close(candidate(x), reference(x))


def test_best_candidate_exports_as_a_workspace(session, tmp_path):
    done = kernelpilot("sessions", "export", session["id"], "--format", "workspace", "--out", str(tmp_path / "ws"),
                       cwd=session["cwd"])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ws" / "model_new.py").is_file()
    assert "bias[c];" in (tmp_path / "ws" / "kernels" / "relu_bias_scale.cpp").read_text()


def test_sessions_list_and_show(session):
    listed = kernelpilot("sessions", "list", cwd=session["cwd"])
    assert session["id"] in listed.stdout
    shown = kernelpilot("sessions", "show", session["id"], cwd=session["cwd"])
    assert shown.returncode == 0
    assert "build_failed" in shown.stdout and "correct" in shown.stdout and "ended    done" in shown.stdout


def _import(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
