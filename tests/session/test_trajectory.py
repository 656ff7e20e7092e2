"""Session logs read as finetuning trajectories: full contexts, rewards per turn, invalid tool calls counted, and
unusable logs skipped with one line each."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.shell import ShellPolicy
from kernelpilot.errors import SessionError, UsageError
from kernelpilot.session.trajectory import find_session_logs, read_trajectories, read_trajectory
from transcripts import write_transcript

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "examples" / "relu_bias" / "model.py"
OLD_FORMAT = Path(__file__).parent / "data" / "old_format" / "session.jsonl"
"""Recorded before LLM turns stored only their new messages: every turn repeats its whole context."""


def test_an_old_format_log_reads_as_a_trajectory():
    trajectory = read_trajectory(OLD_FORMAT)
    first, second = trajectory.turns
    assert [m["role"] for m in first.context] == ["system", "user"]
    assert second.context[:3] == [*first.context, first.response], "turn 2 saw turn 1 and its answer"
    assert [m.get("tool_call_id") for m in second.context[3:]] == ["call_read", "call_bad"]
    assert (first.rewards, second.rewards) == ((), (-1,)), "the evaluation belongs to the turn that called it"
    assert trajectory.reward == -1
    assert trajectory.tool_errors == 1, "the unknown tool `frobnicate`"
    assert trajectory.model == first.model == "replay:tests/session/data/old_format/transcript.json"
    assert trajectory.conversation == [*second.context, second.response]


def run_session(tmp_path: Path, transcript: Path, **settings) -> SessionController:
    controller = SessionController(SessionSettings(task_path=TASK, model=f"replay:{transcript}", device="cpu",
                                                   sessions_root=tmp_path / "sessions", **settings),
                                   lambda event: None)
    controller.run()
    return controller


def test_only_calls_that_were_themselves_wrong_count_as_tool_errors(tmp_path):
    transcript = write_transcript(
        tmp_path,
        ("", [("frobnicate", {}), ("read", "{not json"), ("read", {"path": "missing.py"}),
              ("edit", {"path": "task.py", "old": "x", "new": "y"})]),
        ("", [("shell", {"command": "false"}), ("shell", {"command": "curl example.com"}), ("evaluate", {}),
              ("list", {})]),
        ("", [("done", {})]))
    controller = run_session(tmp_path, transcript, shell=ShellPolicy(default="deny", allow=("false",)))
    trajectory = read_trajectory(controller.session.log_path)
    assert trajectory.tool_errors == 5, \
        "unknown tool, arguments not JSON, a missing file, a read-only file, evaluate before model_new.py exists"
    assert trajectory.reward is None and [t.rewards for t in trajectory.turns] == [(), (), ()]
    assert [t.turn for t in trajectory.turns] == [1, 2, 3]


def test_session_logs_are_found_in_dirs_roots_and_files(tmp_path):
    root = tmp_path / "sessions"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
        shutil.copy(OLD_FORMAT, root / name / "session.jsonl")
    a, b = root / "a" / "session.jsonl", root / "b" / "session.jsonl"
    assert find_session_logs([root]) == [a, b]
    assert find_session_logs([root / "b", a, root]) == [b, a], "each log once"
    with pytest.raises(UsageError, match="no such file"):
        find_session_logs([tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no session logs"):
        find_session_logs([tmp_path / "empty"])


def test_unusable_logs_are_skipped_with_one_line_each(tmp_path):
    good = OLD_FORMAT.read_text()
    lines = good.splitlines(keepends=True)
    logs = {
        "good": good,
        "torn": good + lines[1][: len(lines[1]) // 2],
        "corrupt": lines[0] + "not json\n" + "".join(lines[1:]),
        "headless": "".join(lines[1:]),
        "binary": "\udcff",
        "malformed": good.replace('"tool_call_id": "call_read"', '"tool_call": "call_read"'),
    }
    for name, text in logs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "session.jsonl").write_bytes(text.encode("utf-8", "surrogateescape"))
    trajectories, skipped = read_trajectories([tmp_path])
    assert [t.log_path.parent.name for t in trajectories] == ["good"]
    assert len(skipped) == 5 and all("\n" not in line for line in skipped)
    reasons = {name: line for name in logs for line in skipped if f"/{name}/session.jsonl" in line}
    assert "torn last line" in reasons["torn"]
    assert ":2: corrupt session log line" in reasons["corrupt"]
    assert "no session_started" in reasons["headless"]
    assert "not UTF-8" in reasons["binary"]
    assert "turn 2, message 4: a tool result without its tool_call_id" in reasons["malformed"]
    with pytest.raises(SessionError, match="torn last line"):
        read_trajectory(tmp_path / "torn" / "session.jsonl")


def test_the_example_sessions_read_with_rewards_from_minus_1_to_3():
    trajectories, skipped = read_trajectories([REPO / "examples" / "sessions"])
    assert skipped == []
    by_name = {t.log_path.parent.name: t for t in trajectories}
    assert {t.reward for t in trajectories} >= {-1, 1, 2, 3}
    assert by_name["two_pass_then_fused"].turns[1].rewards == (2,) and by_name["two_pass_then_fused"].reward == 3
    local = by_name["smollm2"]
    assert local.model == "local:smollm2-135m" and local.turns
    assert all(len(t.token_ids) == len(t.logprobs) > 0 for t in local.turns), "exact behaviour logprobs"
    for trajectory in trajectories:
        text = trajectory.log_path.read_text()
        assert str(REPO) not in text and "/tmp/" not in text, "no paths of the machine that recorded it"
