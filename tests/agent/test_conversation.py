"""The conversation sent to the model: native tool results, text-protocol results, nudges, steering."""

from __future__ import annotations

import json
from itertools import pairwise

from agent_helpers import REPO

from kernelpilot.agent.conversation import NUDGE, Conversation
from kernelpilot.agent.textproto import parse_tool_calls, trajectory_in_text_protocol
from kernelpilot.session.trajectory import read_trajectory


def test_fenced_json_tool_calls_are_parsed_from_text():
    text = ('I will write it.\n```json\n{"tool": "write", "arguments": {"path": "a.cpp", "content": "x"}}\n```\n'
            'then\n```json\n{"tool": "evaluate"}\n```\n```json\nnot json\n```')
    calls = parse_tool_calls(text, turn=3)
    assert [c["function"]["name"] for c in calls] == ["write", "evaluate"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "a.cpp", "content": "x"}
    assert calls[0]["id"] == "text-3-0"


def test_text_protocol_results_come_back_as_one_user_message():
    text = '```json\n{"tool": "list"}\n```\n```json\n{"tool": "read", "arguments": {"path": "task.py"}}\n```'
    conversation = Conversation([{"role": "user", "content": "task"}])
    calls = parse_tool_calls(text, 1)
    conversation.add_assistant({"role": "assistant", "content": text}, calls)
    conversation.add_tool_result(calls[0]["id"], "list", "task.py")
    conversation.add_tool_result(calls[1]["id"], "read", "class Model")
    messages = conversation.ready_for_model()
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert "task.py" in messages[-1]["content"] and "class Model" in messages[-1]["content"]
    assert "tool_results" not in messages[-1]


def test_a_reply_without_tool_calls_gets_a_nudge_and_steering_closes_pending_calls():
    conversation = Conversation([{"role": "user", "content": "task"}])
    conversation.add_assistant({"role": "assistant", "content": "thinking"}, [])
    assert conversation.ready_for_model()[-1] == {"role": "user", "content": NUDGE}
    call = {"id": "c1", "type": "function", "function": {"name": "evaluate", "arguments": "{}"}}
    conversation.add_assistant({"role": "assistant", "content": "", "tool_calls": [call]}, [call])
    conversation.add_user("use float4 loads")
    roles = [m["role"] for m in conversation.ready_for_model()]
    assert roles[-2:] == ["tool", "user"]


def test_a_native_tool_session_converts_to_the_text_protocol_for_finetuning():
    native = read_trajectory(REPO / "examples" / "sessions" / "two_pass" / "session.jsonl")
    text = trajectory_in_text_protocol(native)
    messages = text.conversation
    assert not any(m["role"] == "tool" or m.get("tool_calls") for m in messages)
    assert "# How to call tools" in messages[0]["content"]
    for before, after in zip(native.turns, text.turns):
        assert [c["function"]["name"] for c in parse_tool_calls(after.response["content"], after.turn)] == \
            [c["function"]["name"] for c in before.response["tool_calls"]]
    for turn, following in pairwise(text.turns):
        assert following.context[:len(turn.context) + 1] == [*turn.context, turn.response], "prefix kept"
    local = read_trajectory(REPO / "examples" / "sessions" / "smollm2" / "session.jsonl")
    assert trajectory_in_text_protocol(local) == local
