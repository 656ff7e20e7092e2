"""The session log: every event reads back as written; a torn last line (kill mid-write) is skipped and cut."""

from __future__ import annotations

import pytest

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult, Violation
from kernelpilot.session.events import (
    BuildLogLine,
    Evaluation,
    LLMTurn,
    SessionStarted,
    TokenDelta,
    ToolCall,
    UserDecision,
)
from kernelpilot.session.log import SessionLog, read_events

RESULT = EvalResult(task="t.py", candidate="c", device="cpu", built=True, reward=-1,
                    violations=(Violation("op_audit", "aten.add"),), times_ms={"eager": 1.0, "candidate": None})
EVENTS = [
    SessionStarted(session_id="s", task_path="t.py", task_sha256="ab", skill="cpu", model="m",
                   sampling={"temperature": 0.2}, device="cpu"),
    LLMTurn(turn=1, messages=[{"role": "user", "content": "go"}], response={"role": "assistant", "content": "ok"},
            token_ids=[1, 2], logprobs=[-0.1, -0.2], prompt_tokens=5, completion_tokens=2, cost_usd=0.01),
    ToolCall(turn=1, call_id="c1", name="write", arguments={"path": "k.cpp", "content": "ünïcode\n"}),
    Evaluation(candidate_id=1, commit="abc", result=RESULT),
    UserDecision(decision="accept", candidate_id=1, detail={"hunks": ["k.cpp#0"]}),
]


def test_events_read_back_equal(tmp_path):
    log = SessionLog(tmp_path / "session.jsonl")
    for event in EVENTS:
        log.append(event)
    assert read_events(tmp_path / "session.jsonl") == EVENTS


def test_live_only_events_are_not_logged(tmp_path):
    log = SessionLog(tmp_path / "session.jsonl")
    log.append(TokenDelta(turn=1, text="x"))
    log.append(BuildLogLine(candidate_id=1, line="compile"))
    assert (tmp_path / "session.jsonl").read_text() == ""


def test_torn_last_line_is_skipped_and_cut_before_appending(tmp_path):
    path = tmp_path / "session.jsonl"
    log = SessionLog(path)
    for event in EVENTS[:3]:
        log.append(event)
    with open(path, "a") as file:
        file.write('{"kind": "tool_result", "turn": 1, "call_')
    assert read_events(path) == EVENTS[:3]
    log = SessionLog(path)
    log.append(EVENTS[3])
    assert read_events(path) == EVENTS[:4]


def test_corruption_before_the_last_line_is_an_error(tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_text('{"kind": "user_message", "text": "a"}\nnot json\n{"kind": "user_message", "text": "b"}\n')
    with pytest.raises(SessionError, match="session.jsonl:2"):
        read_events(path)
