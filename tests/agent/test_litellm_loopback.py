"""The real litellm client against an OpenAI-compatible server on loopback (stdlib `http.server`): streaming, tool
calls, retries, a bad key, a refused connection, a server that refuses tools, and what `--headless` prints.
Only the server is scripted; litellm, httpx and the openai SDK run as they do against vLLM."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agent_helpers import TASK, kernelpilot

from kernelpilot.agent import llm
from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.llm import LiteLLMClient, ProviderError
from kernelpilot.cli import main
from kernelpilot.session.events import LLMTurn, ToolResult
from kernelpilot.session.log import read_events

MODEL = "openai/local-coder"
"""A model litellm has never heard of, as on any local vLLM or llama.cpp server."""
BAD_KEY = "Incorrect API key provided: sk-bad. You can find your API key at https://platform.openai.com/account."
TOOLS_REFUSED = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
Answer = tuple[int, object]
"""(HTTP status, a JSON body, or a list of chunks to stream as server-sent events)."""


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local-coder",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


USAGE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "local-coder", "choices": [],
         "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}


def text(words: str) -> Answer:
    pieces = [chunk({"content": piece}) for piece in re.findall(r"\S+\s*", words)]
    return 200, [chunk({"role": "assistant", "content": ""}), *pieces, chunk({}, "stop"), USAGE]


def tool_call(name: str, arguments: dict) -> Answer:
    raw = json.dumps(arguments)
    head = {"index": 0, "id": "call_7", "type": "function", "function": {"name": name, "arguments": ""}}
    pieces = [chunk({"role": "assistant", "content": None, "tool_calls": [head]})]
    pieces += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": raw[i:i + 7]}}]})
               for i in range(0, len(raw), 7)]
    return 200, [*pieces, chunk({}, "tool_calls"), USAGE]


def error(status: int, message: str, kind: str = "invalid_request_error") -> Answer:
    return status, {"error": {"message": message, "type": kind, "param": None, "code": None}}


class Server:
    """Answers each chat completion with the next scripted answer; with `refuse_tools`, any request with tools
    gets the 400 of a vLLM started without `--enable-auto-tool-choice`."""

    def __init__(self) -> None:
        self.script: list[Answer] = []
        self.refuse_tools = False
        self.requests: list[dict] = []
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.api_base = f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                status, payload = server.answer(body)
                self.send_response(status)
                if isinstance(payload, list):
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for piece in payload:
                        self.wfile.write(f"data: {json.dumps(piece)}\n\n".encode())
                    self.wfile.write(b"data: [DONE]\n\n")
                    return
                raw = json.dumps(payload).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler

    def answer(self, body: dict) -> Answer:
        if self.refuse_tools and "tools" in body:
            return error(400, TOOLS_REFUSED)
        return self.script.pop(0) if self.script else error(500, "script exhausted", "server_error")

    def __enter__(self) -> Server:
        threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    with Server() as running:
        yield running


def client(server: Server, **options) -> LiteLLMClient:
    return LiteLLMClient(MODEL, {}, {"api_base": server.api_base, "api_key": "sk-test", **options})


TOOLS = [{"type": "function", "function": {"name": "read", "description": "read a file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
HELLO = [{"role": "system", "content": "You write kernels."}, {"role": "user", "content": "hi"}]


def test_streamed_text_arrives_in_deltas_with_usage(server):
    server.script = [text("Let me read the task first.")]
    deltas = []
    reply = client(server).complete(HELLO, None, deltas.append)
    assert "".join(deltas) == "Let me read the task first." == reply.message["content"] and len(deltas) > 1
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cost_usd) == (12, 5, 0.0)
    assert server.requests[0]["stream"] is True and server.requests[0]["model"] == "local-coder"


def test_an_unknown_model_on_an_openai_compatible_server_gets_native_tools(server):
    server.script = [tool_call("read", {"path": "task.py"})]
    reply = client(server).complete(HELLO, TOOLS, lambda piece: None)
    (call,) = reply.message["tool_calls"]
    assert call["function"]["name"] == "read" and json.loads(call["function"]["arguments"]) == {"path": "task.py"}
    assert server.requests[0]["tools"] == TOOLS


@pytest.fixture
def one_retry(monkeypatch) -> None:
    """litellm retries twice over: the openai SDK `num_retries` times, then tenacity `num_retries` attempts, each
    with a backoff of seconds; one of each keeps these tests short."""
    monkeypatch.setattr(llm, "NUM_RETRIES", 1)


def test_server_errors_are_retried_past_the_sdks_own_retries(server, one_retry):
    server.script = [error(500, "overloaded", "server_error")] * 2 + [text("back again")]
    reply = client(server).complete(HELLO, None, lambda piece: None)
    assert reply.message["content"] == "back again" and len(server.requests) == 3


def test_a_bad_key_ends_at_once_with_the_providers_words_in_one_line(server):
    server.script = [error(401, BAD_KEY)] * 5
    with pytest.raises(ProviderError) as raised:
        client(server).complete(HELLO, None, lambda piece: None)
    message = str(raised.value)
    assert "AuthenticationError (401" in message and BAD_KEY in message and "\n" not in message
    assert "tenacity" not in message and len(server.requests) == 1, "a bad key is not retried"


def test_a_refused_connection_is_retried_then_named_in_one_line(one_retry):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        api_base = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    with pytest.raises(ProviderError) as raised:
        LiteLLMClient(MODEL, {}, {"api_base": api_base, "api_key": "sk-test"}).complete(HELLO, None, lambda p: None)
    message = str(raised.value)
    assert message.startswith(f"APIConnectionError (openai): cannot reach {api_base}: [Errno ")
    assert message.endswith("] Connection refused") and "\n" not in message
    assert "(500)" not in message and "Connection error." not in message, \
        "no server answered, with a 500 or otherwise"  # (the port itself may hold the digits 500)


def test_a_server_that_refuses_tools_gets_the_text_protocol_from_then_on(server):
    fenced = 'Reading it.\n```json\n{"tool": "read", "arguments": {"path": "task.py"}}\n```'
    server.script, server.refuse_tools = [text(fenced), text(fenced)], True
    chat = client(server)
    reply = chat.complete(HELLO, TOOLS, lambda piece: None)
    assert reply.message["content"] == fenced and not chat.native_tools
    first, second = server.requests
    assert "tools" in first and "tools" not in second
    assert "# How to call tools" in second["messages"][0]["content"], "the protocol is taught once tools are refused"
    chat.complete(HELLO, TOOLS, lambda piece: None)
    assert len(server.requests) == 3 and "tools" not in server.requests[2]


def test_native_calls_already_made_reach_a_server_that_refuses_tools_as_text(server):
    """A session resumed onto another server: its earlier native calls and their results, in the text protocol."""
    server.script, server.refuse_tools = [text("Done reading.")], True
    call = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "task.py"}'}}
    history = [*HELLO, {"role": "assistant", "content": "", "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "call_1", "name": "read", "content": "class Model: ..."}]
    client(server).complete(history, TOOLS, lambda piece: None)
    sent = server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"] and "tools" not in server.requests[-1]
    assert '{"tool": "read", "arguments": {"path": "task.py"}}' in sent[2]["content"]
    assert sent[3]["content"] == "Result of `read` (call_1):\nclass Model: ..."


def test_a_session_on_a_server_that_refuses_tools_runs_on_the_text_protocol(server, tmp_path):
    done = '```json\n{"tool": "list", "arguments": {}}\n```\n```json\n{"tool": "done", "arguments": {}}\n```'
    server.script, server.refuse_tools = [text(done)], True
    settings = SessionSettings(task_path=TASK, model=MODEL, device="cpu", sessions_root=tmp_path,
                               llm_options={"api_base": server.api_base, "api_key": "sk-test"})
    controller = SessionController(settings, lambda event: None)
    assert controller.run().reason == "done"
    events = read_events(controller.session.log_path)
    assert [e.name for e in events if isinstance(e, ToolResult)] == ["list", "done"]
    assert [e.response["content"] for e in events if isinstance(e, LLMTurn)] == [done]


def headless(argv: list[str], tmp_path, monkeypatch, capsys, api_base: str) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    (tmp_path / "kernelpilot.toml").write_text(f'api_base = "{api_base}"\n')
    status = main(["optimize", str(TASK), "--device", "cpu", "--headless", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_headless_prints_one_json_object_and_exit_3_on_a_provider_error(server, tmp_path, monkeypatch, capsys):
    server.script = [error(401, BAD_KEY)]
    status, out, err = headless(["--model", MODEL], tmp_path, monkeypatch, capsys, server.api_base)
    summary = json.loads(out)
    assert status == 3 and summary["reason"].startswith("llm_error") and BAD_KEY in summary["reason"]
    assert "\n" not in summary["reason"] and "Give Feedback" not in out + err and "\033[" not in out


def test_headless_exits_0_when_the_agent_is_done(server, tmp_path, monkeypatch, capsys):
    server.script = [tool_call("done", {"summary": "nothing to do"})]
    status, out, _ = headless(["--model", MODEL], tmp_path, monkeypatch, capsys, server.api_base)
    assert status == 0 and json.loads(out)["reason"] == "done"


def test_headless_with_an_unknown_provider_is_a_usage_error_and_no_noise(server, tmp_path, monkeypatch, capsys):
    status, out, err = headless(["--model", "nonsense/x"], tmp_path, monkeypatch, capsys, server.api_base)
    assert status == 2 and out == "" and err.count("\n") == 1 and "bad model string" in err
    assert "Provider List" not in err


@pytest.mark.slow
def test_headless_stdout_is_one_json_object_in_a_process_of_its_own(server, tmp_path, monkeypatch):
    """What a shell pipeline sees: nothing printed from below Python's `sys.stdout` either."""
    server.script = [error(401, BAD_KEY)]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bad")
    (tmp_path / "kernelpilot.toml").write_text(f'api_base = "{server.api_base}"\n')
    done = kernelpilot("optimize", str(TASK), "--model", MODEL, "--device", "cpu", "--headless", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert json.loads(done.stdout)["reason"].startswith("llm_error") and "\033[" not in done.stdout
    nonsense = kernelpilot("optimize", str(TASK), "--model", "nonsense/x", "--headless", cwd=tmp_path)
    assert (nonsense.returncode, nonsense.stdout) == (2, "") and "Provider List" not in nonsense.stderr
