"""Real-provider request/response shapes through litellm's own mocks (`mock_response=`): streaming text,
a streamed native tool call, the fenced-JSON fallback, usage and cost. Nothing but the provider is mocked."""

from __future__ import annotations

import json

import pytest
from agent_helpers import TASK

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.llm import LiteLLMClient, import_litellm, make_client
from kernelpilot.errors import UsageError
from kernelpilot.session.events import LLMTurn, SessionStarted, TokenDelta, ToolResult
from kernelpilot.session.log import read_events

litellm = import_litellm()


def tool_call_response(name: str, arguments: dict):
    return litellm.ModelResponse(choices=[{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": name, "arguments": json.dumps(arguments)}}]}}])


def test_streamed_text_arrives_in_deltas_with_usage_and_cost():
    client = LiteLLMClient("openai/gpt-4o", {"temperature": 0.2}, {"mock_response": "Let me read the task first."})
    deltas = []
    reply = client.complete([{"role": "user", "content": "hi"}], None, deltas.append)
    assert "".join(deltas) == "Let me read the task first." == reply.message["content"]
    assert len(deltas) > 1, "streamed"
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.cost_usd > 0, "litellm prices gpt-4o"


def test_streamed_native_tool_call_is_assembled():
    client = LiteLLMClient("openai/gpt-4o", {}, {"mock_response": tool_call_response("read", {"path": "task.py"})})
    reply = client.complete([{"role": "user", "content": "hi"}], [{"type": "function"}], lambda text: None)
    (call,) = reply.message["tool_calls"]
    assert call["id"] == "call_1" and call["function"]["name"] == "read"
    assert json.loads(call["function"]["arguments"]) == {"path": "task.py"}


def test_a_session_on_a_mocked_provider_logs_the_turn(tmp_path):
    settings = SessionSettings(task_path=TASK, model="anthropic/claude-sonnet-4-5", device="cpu",
                               sessions_root=tmp_path, sampling={"temperature": 0.3},
                               llm_options={"mock_response": tool_call_response("done", {"summary": "nothing"})})
    seen = []
    controller = SessionController(settings, seen.append)
    summary = controller.run()
    assert summary.reason == "done" and summary.turns == 1 and summary.cost_usd > 0
    events = read_events(controller.session.log_path)
    started = next(e for e in events if isinstance(e, SessionStarted))
    assert started.model == "anthropic/claude-sonnet-4-5" and started.sampling == {"temperature": 0.3}
    (turn,) = [e for e in events if isinstance(e, LLMTurn)]
    assert turn.new_messages[0]["role"] == "system" and "# Task" in turn.new_messages[1]["content"]
    assert turn.response["tool_calls"][0]["function"]["name"] == "done"
    assert turn.prompt_tokens > 0 and turn.cost_usd == summary.cost_usd
    assert (turn.model, turn.sampling) == ("anthropic/claude-sonnet-4-5", {"temperature": 0.3})
    assert not any(isinstance(e, TokenDelta) for e in events), "deltas are live-only"


def test_models_without_native_tools_use_fenced_json(tmp_path):
    text = 'Nothing to do.\n```json\n{"tool": "list", "arguments": {}}\n```\n```json\n{"tool": "done"}\n```'
    settings = SessionSettings(task_path=TASK, model="ollama/qwen2.5-coder", device="cpu", sessions_root=tmp_path,
                               llm_options={"mock_response": text, "api_base": "http://localhost:11434"})
    controller = SessionController(settings, lambda event: None)
    assert controller.run().reason == "done"
    events = read_events(controller.session.log_path)
    (turn,) = [e for e in events if isinstance(e, LLMTurn)]
    assert "```json" in turn.new_messages[0]["content"], "the system prompt teaches the text protocol"
    assert [e.name for e in events if isinstance(e, ToolResult)] == ["list", "done"]


def test_bad_model_strings_are_user_errors():
    for model in ("not-a-provider/xyz-model", "gpt 4"):
        with pytest.raises(UsageError, match="bad model string"):
            make_client(model, {}, {})
