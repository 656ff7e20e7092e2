"""The shell tool under its policy: a denied command is never run, an allowed one is, `ask` waits for the user."""

from __future__ import annotations

import threading

import pytest
from agent_helpers import TASK
from transcripts import write_transcript

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.shell import ShellPolicy
from kernelpilot.harness.sandbox import isolation_kind, unshare_form
from kernelpilot.session.events import PermissionAsked, ToolResult, UserDecision


def run_session(tmp_path, transcript_path, policy, on_event=lambda controller, event: None):
    events = []

    def record(event):
        events.append(event)
        on_event(controller, event)

    settings = SessionSettings(task_path=TASK, model=f"replay:{transcript_path}", device="cpu", shell=policy,
                               sessions_root=tmp_path / "sessions")
    controller = SessionController(settings, record)
    controller.run()
    return controller, events


def shell_results(events):
    return [e for e in events if isinstance(e, ToolResult) and e.name == "shell"]


def test_denied_command_is_not_run(tmp_path):
    path = write_transcript(tmp_path, ("", [("shell", {"command": "touch pwned"})]), ("", [("done", {})]))
    controller, events = run_session(tmp_path, path, ShellPolicy(default="deny"))
    assert not (controller.workspace_dir / "pwned").exists()
    (result,) = shell_results(events)
    assert not result.ok and "denied" in result.output


def test_deny_pattern_wins_over_allow(tmp_path):
    path = write_transcript(tmp_path, ("", [("shell", {"command": "touch pwned"})]), ("", [("done", {})]))
    controller, _ = run_session(tmp_path, path, ShellPolicy("allow", allow=("touch *",), deny=("touch pw*",)))
    assert not (controller.workspace_dir / "pwned").exists()


def test_allowed_command_runs_in_the_workspace(tmp_path):
    path = write_transcript(tmp_path, ("", [("shell", {"command": "touch made && pwd"})]), ("", [("done", {})]))
    controller, events = run_session(tmp_path, path, ShellPolicy("deny", allow=("touch made*",)))
    assert (controller.workspace_dir / "made").exists()
    (result,) = shell_results(events)
    assert result.ok and str(controller.workspace_dir.resolve()) in result.output


def test_ask_waits_for_the_user_and_always_allows_the_command_again(tmp_path):
    call = ("shell", {"command": "echo hi >> asked"})
    path = write_transcript(tmp_path, ("", [call]), ("", [call]), ("", [("shell", {"command": "touch other"})]),
                            ("", [("done", {})]))
    answers = iter(["always", "deny"])

    def answer(controller, event):
        if isinstance(event, PermissionAsked):
            threading.Thread(target=controller.answer_permission, args=(event.request_id, next(answers))).start()

    controller, events = run_session(tmp_path, path, ShellPolicy("ask"), answer)
    assert (controller.workspace_dir / "asked").read_text() == "hi\nhi\n"
    assert [e.command for e in events if isinstance(e, PermissionAsked)] == ["echo hi >> asked", "touch other"]
    assert [e.detail["answer"] for e in events if isinstance(e, UserDecision)] == ["always", "deny"]
    assert not (controller.workspace_dir / "other").exists()


@pytest.fixture(params=["strongest", "unshare"])
def sandbox(request, monkeypatch):
    """The strongest isolation here, and `unshare` with read-only mounts (the GPU images' fallback)."""
    if request.param == "unshare":
        form = unshare_form()
        if form is None or not form[1]:
            pytest.skip("unshare cannot make a read-only system here")
        monkeypatch.setenv("KERNELPILOT_SANDBOX", "unshare")
    isolation_kind.cache_clear()
    yield isolation_kind()
    isolation_kind.cache_clear()


def test_shell_commands_run_sandboxed(sandbox, tmp_path, monkeypatch):
    """Writes outside the workspace and to the task copy fail; API keys never reach the command."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    outside = tmp_path / "outside"
    command = f"touch {outside}; echo tampered >> task.py; touch inside; echo key=$OPENAI_API_KEY."
    path = write_transcript(tmp_path, ("", [("shell", {"command": command})]), ("", [("done", {})]))
    controller, events = run_session(tmp_path, path, ShellPolicy("allow"))
    (result,) = shell_results(events)
    assert "key=." in result.output and "sk-do-not-leak" not in result.output
    assert (controller.workspace_dir / "inside").exists()
    if sandbox != "bwrap" and not sandbox.endswith("+ro"):
        pytest.skip(f"file-system confinement needs bubblewrap or unshare's mounts (isolation here: {sandbox})")
    assert not outside.exists()
    assert "tampered" not in (controller.workspace_dir / "task.py").read_text()
