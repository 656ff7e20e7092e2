"""A session killed with SIGKILL mid-evaluation keeps every completed event, and resumes from its log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from agent_helpers import TASK, TRANSCRIPT

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.conversation import INTERRUPTED
from kernelpilot.session.events import Evaluation, LLMTurn, SessionEnded, SessionStarted, ToolCall
from kernelpilot.session.log import read_events
from kernelpilot.session.store import LOG_NAME


def wait_for(path, text, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}")


def test_kill_9_mid_evaluation_keeps_the_log_and_resumes(tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "kernelpilot", "optimize", str(TASK), "--headless",
                                "--model", f"replay:{TRANSCRIPT}"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        sessions = tmp_path / ".kernelpilot" / "sessions"
        deadline = time.monotonic() + 60
        while not (sessions.is_dir() and any(sessions.iterdir())) and time.monotonic() < deadline:
            time.sleep(0.05)
        (directory,) = sessions.iterdir()
        log = directory / LOG_NAME
        wait_for(log, '"call_id": "call_eval2"')
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL

    events = read_events(log)
    assert not any(isinstance(e, SessionEnded) for e in events)
    assert [e.candidate_id for e in events if isinstance(e, Evaluation)] == [1]
    last = events[-1]
    assert isinstance(last, ToolCall) and last.call_id == "call_eval2"
    assert all(line and json.loads(line) for line in log.read_text().splitlines())

    record = SessionController.open(directory.name, sessions_root=sessions)
    assert [c.candidate_id for c in record.candidates()] == [1]

    resumed = SessionController(SessionSettings(resume=directory.name, sessions_root=sessions,
                                                model=f"replay:{TRANSCRIPT}"), lambda event: None)
    assert resumed.run().reason == "done"
    events = read_events(log)
    assert sum(isinstance(e, SessionStarted) for e in events) == 1
    turns = [e for e in events if isinstance(e, LLMTurn)]
    assert [t.turn for t in turns] == [1, 2, 3, 4]
    interrupted = {"role": "tool", "tool_call_id": "call_eval2", "name": "evaluate", "content": INTERRUPTED}
    assert turns[-1].messages[-1] == interrupted, "the model is told the evaluation never finished"
