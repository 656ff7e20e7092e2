"""A session killed with SIGKILL mid-evaluation keeps every completed event, and resumes from its log: the
interrupted evaluation runs again, the killed run's scratch folder goes, and a finished session stays finished."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
from agent_helpers import TASK, TRANSCRIPT

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.harness.worker_process import SCRATCH_PREFIX, scratch_parent
from kernelpilot.session.events import Evaluation, LLMTurn, SessionEnded, SessionStarted, ToolCall, ToolResult
from kernelpilot.session.log import read_events
from kernelpilot.session.session import Session
from kernelpilot.session.store import LOG_NAME, WORKSPACE_NAME


def wait_until(ready, what, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} never happened")


def scratch_of(pid: int) -> list[Path]:
    """The evaluation scratch folders a kernelpilot process with this pid made (its workers' /dev/shm space)."""
    return list(Path(scratch_parent() or "/tmp").glob(f"{SCRATCH_PREFIX}{pid}-*"))


def start_optimize(cwd: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kernelpilot", "optimize", str(TASK), "--headless", *args],
                            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def kill_9(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL


def test_kill_9_mid_evaluation_keeps_the_log_and_resumes(tmp_path):
    process = start_optimize(tmp_path, "--model", f"replay:{TRANSCRIPT}")
    sessions = tmp_path / ".kernelpilot" / "sessions"
    try:
        wait_until(lambda: sessions.is_dir() and any(sessions.iterdir()), "a session directory", timeout=90)
        (directory,) = sessions.iterdir()
        log = directory / LOG_NAME
        wait_until(lambda: log.is_file() and '"call_id": "call_eval2"' in log.read_text(), "the second evaluate call")
        wait_until(lambda: (directory / "candidates" / "2" / "model_new.py").is_file(), "candidate 2's export")
    finally:
        kill_9(process)
    assert scratch_of(process.pid), "the killed evaluation left its scratch folder"

    events = read_events(log)
    assert not any(isinstance(e, SessionEnded) for e in events)
    assert [e.candidate_id for e in events if isinstance(e, Evaluation)] == [1]
    last = events[-1]
    assert isinstance(last, ToolCall) and last.call_id == "call_eval2"
    assert all(line and json.loads(line) for line in log.read_text().splitlines())
    repo = git.Repo(directory / WORKSPACE_NAME)
    (committed,) = [c for c in repo.iter_commits() if c.message.strip() == "candidate 2"]

    assert [c.candidate_id for c in Session.open(directory.name, sessions).candidates()] == [1]

    resumed = SessionController(SessionSettings(resume=directory.name, sessions_root=sessions,
                                                model=f"replay:{TRANSCRIPT}"), lambda event: None)
    summary = resumed.run().to_json()
    assert not scratch_of(process.pid), "the next run cleans the killed run's scratch folder"
    assert summary["reason"] == "done"
    assert [(c["candidate_id"], c["status"]) for c in summary["candidates"]] == [(1, "build_failed"), (2, "correct")]
    assert summary["best"]["candidate_id"] == 2 and summary["best"]["commit"] == committed.hexsha
    assert [c.message.strip() for c in repo.iter_commits()].count("candidate 2") == 1, "evaluated, not re-committed"
    assert json.loads(repo.git.notes("show", committed.hexsha))["reward"] == summary["best"]["reward"]

    events = read_events(log)
    assert sum(isinstance(e, SessionStarted) for e in events) == 1
    assert [e.call_id for e in events if isinstance(e, ToolCall)].count("call_eval2") == 1
    (answer,) = [e for e in events if isinstance(e, ToolResult) and e.call_id == "call_eval2"]
    assert answer.ok and answer.output.startswith("candidate 2: correct")
    turns = [e for e in events if isinstance(e, LLMTurn)]
    assert [t.turn for t in turns] == [1, 2, 3, 4]
    assert turns[-1].new_messages[-1]["tool_call_id"] == "call_eval2"
    assert turns[-1].new_messages[-1]["content"] == answer.output, "the model is told the re-run's verdict"

    ended = log.read_bytes()
    again = SessionController(SessionSettings(resume=directory.name, sessions_root=sessions,
                                              model=f"replay:{TRANSCRIPT}"), lambda event: None).run()
    assert log.read_bytes() == ended, "a finished session is not run, nor ended, again"
    assert again.reason == "done" and again.best.candidate_id == 2


def test_a_manual_save_killed_mid_evaluation_is_evaluated_on_resume(tmp_path):
    """Manual mode logs no tool call: the workspace's commit that never got its verdict is what resume finds."""
    process = start_optimize(tmp_path, "--max-minutes", "10")
    sessions = tmp_path / ".kernelpilot" / "sessions"
    try:
        wait_until(lambda: sessions.is_dir() and any(sessions.iterdir()), "a session directory", timeout=90)
        (directory,) = sessions.iterdir()
        log = directory / LOG_NAME
        wait_until(lambda: log.is_file() and "session_started" in log.read_text(), "the session's start")
        time.sleep(2)  # the save watcher starts after the log's first line
        model = directory / WORKSPACE_NAME / "model_new.py"
        # the user's save takes 4 s to import: the kill lands inside its evaluation, however loaded the machine
        model.write_text(model.read_text() + "\nimport time\n\ntime.sleep(4)  # saved by the user\n")
        wait_until(lambda: (directory / "candidates" / "1" / "model_new.py").is_file(), "candidate 1's export")
    finally:
        kill_9(process)
    assert not any(isinstance(e, Evaluation) for e in read_events(log))
    repo = git.Repo(directory / WORKSPACE_NAME)
    (committed,) = [c for c in repo.iter_commits() if c.message.strip() == "candidate 1"]

    resumed = SessionController(SessionSettings(resume=directory.name, sessions_root=sessions, max_minutes=0.01),
                                lambda event: None)
    summary = resumed.run()
    assert [(c.candidate_id, c.commit) for c in summary.candidates] == [(1, committed.hexsha)]
    assert [c.message.strip() for c in repo.iter_commits()].count("candidate 1") == 1
    assert [e.candidate_id for e in read_events(log) if isinstance(e, Evaluation)] == [1]
