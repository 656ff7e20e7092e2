"""Controlling a live session: stop ends it before the next tool runs; headless settings from config and flags."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from agent_helpers import TASK
from transcripts import write_transcript

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.commands.optimize import settings_from
from kernelpilot.harness import processes
from kernelpilot.harness.worker_process import SCRATCH_PREFIX, scratch_parent
from kernelpilot.session.events import LLMTurn, SessionEnded, ToolCall, ToolResult


def test_stop_ends_the_session_before_the_next_tool(tmp_path):
    path = write_transcript(tmp_path, ("", [("write", {"path": "a.txt", "content": "x"})]), ("", [("done", {})]))
    events = []

    def on_event(event):
        events.append(event)
        if isinstance(event, LLMTurn):
            controller.stop()

    controller = SessionController(SessionSettings(task_path=TASK, model=f"replay:{path}", device="cpu",
                                                   sessions_root=tmp_path), on_event)
    assert controller.run().reason == "stopped"
    assert not (controller.workspace_dir / "a.txt").exists()
    assert not any(isinstance(e, ToolCall) for e in events)
    assert isinstance(events[-1], SessionEnded)


def test_headless_shell_policy_denies_what_it_would_ask(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "kernelpilot.toml").write_text('[shell]\nallow = ["make *"]\n')
    args = argparse.Namespace(task=str(TASK), model="replay:x.json", skill=None, device="cpu", policy=None,
                              max_turns=7, budget_usd=None, max_minutes=None, resume=None,
                              allow_shell=["nvcc --version"])
    settings = settings_from(args, headless=True)
    assert settings.shell.decide("nvcc --version") == "allow" and settings.shell.decide("make all") == "allow"
    assert settings.shell.decide("curl example.com") == "deny"
    assert settings_from(args, headless=False).shell.decide("curl example.com") == "ask"
    assert (settings.max_turns, settings.model, settings.device) == (7, "replay:x.json", "cpu")


def test_a_session_log_replays_as_a_transcript(tmp_path):
    path = write_transcript(tmp_path, ("Looking around.", [("list", {})]),
                            ("", [("write", {"path": "notes.md", "content": "hi"})]), ("", [("done", {})]))
    first = SessionController(SessionSettings(task_path=TASK, model=f"replay:{path}", device="cpu",
                                              sessions_root=tmp_path), lambda event: None)
    first.run()
    calls = []

    def on_event(event):
        if isinstance(event, ToolCall):
            calls.append(event.name)

    again = SessionController(SessionSettings(task_path=TASK, model=f"replay:{first.session.log_path}", device="cpu",
                                              sessions_root=tmp_path), on_event)
    assert again.run().reason == "done"
    assert calls == ["list", "write", "done"]
    assert (again.workspace_dir / "notes.md").read_text() == "hi"


def test_a_tampered_task_copy_is_not_evaluated(tmp_path):
    """The hash check behind the sandbox (whose read-only task.py the agent's shell cannot write): the
    copy is changed from outside, between the agent's write and its evaluate."""
    path = write_transcript(tmp_path, ("", [("write", {"path": "model_new.py", "content": "class ModelNew: ...\n"}),
                            ("evaluate", {})]), ("", [("done", {})]))
    events = []

    def tamper_after_write(event):
        events.append(event)
        if isinstance(event, ToolResult) and event.name == "write":
            task = controller.workspace_dir / "task.py"
            task.chmod(0o644)
            task.write_text(task.read_text() + "get_inputs = lambda: []\n")

    controller = SessionController(SessionSettings(task_path=TASK, model=f"replay:{path}", device="cpu",
                                                   sessions_root=tmp_path), tamper_after_write)
    controller.run()
    (result,) = [e for e in events if isinstance(e, ToolResult) and e.name == "evaluate"]
    assert not result.ok and "task.py no longer matches" in result.output
    assert controller.session.candidates() == []


def test_the_judge_prepared_ahead_is_gone_when_the_session_ends(tmp_path):
    """The next evaluation's judge is prepared while the agent works (the first one checks the task before the
    session starts); a session that ends leaves no worker and no scratch folder behind."""
    path = write_transcript(tmp_path, ("", [("done", {})]))
    scratch_root = Path(scratch_parent() or tempfile.gettempdir())
    folders, before = set(scratch_root.glob(f"{SCRATCH_PREFIX}{os.getpid()}-*")), processes.descendants(os.getpid())
    controller = SessionController(SessionSettings(task_path=TASK, model=f"replay:{path}", device="cpu",
                                                   sessions_root=tmp_path), lambda event: None)
    assert controller.run().reason == "done"
    assert set(scratch_root.glob(f"{SCRATCH_PREFIX}{os.getpid()}-*")) == folders
    assert processes.descendants(os.getpid()).keys() <= before.keys()


def test_a_tool_the_loop_does_not_have_is_answered_not_run(tmp_path):
    path = write_transcript(tmp_path, ("", [("compile", {"path": "kernels/k.cpp"}), ("read", {"path": "nowhere"})]),
                            ("", [("done", {})]))
    events = []
    controller = SessionController(SessionSettings(task_path=TASK, model=f"replay:{path}", device="cpu",
                                                   sessions_root=tmp_path), events.append)
    assert controller.run().reason == "done"
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.ok) for r in results] == [("compile", False), ("read", False), ("done", True)]
    assert "unknown tool 'compile'" in results[0].output and "evaluate" in results[0].output


def test_resuming_a_finished_session_needs_no_provider_key(tmp_path, monkeypatch):
    """A finished session's `--resume` only gives back its summary: no client is made, so no API key is asked for."""
    path = write_transcript(tmp_path, ("", [("done", {})]))
    first = SessionController(SessionSettings(task_path=TASK, model=f"replay:{path}", device="cpu",
                                              sessions_root=tmp_path), lambda event: None)
    assert first.run().reason == "done"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    again = SessionController(SessionSettings(resume=first.session_id, model="openai/gpt-4o", device="cpu",
                                              sessions_root=tmp_path), lambda event: None)
    assert again.run().reason == "done"
