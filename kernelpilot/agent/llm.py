"""The model behind the agent: any litellm model string, `replay:PATH` (a recorded transcript), or
`local:NAME_OR_PATH[+ADAPTER]` (in-process transformers, `local_model`).

litellm does the provider work: streaming, retries with exponential backoff (`num_retries` with
`retry_strategy="exponential_backoff_retry"`, through tenacity: rate limits, timeouts, connection and server
errors; a `retry_policy` spares answers that cannot change, a bad key or a rejected request), token
usage and cost (`completion_cost`, 0 for models it has no price for, e.g. a local vLLM). Logprobs are
requested with `drop_params`, so providers that do not offer them simply return none; token ids are
kept when the server returns tokens as ids (vLLM's `return_tokens_as_token_ids`). The provider's last error
reaches the session as a `ProviderError` of one line.

With `tool_protocol = "auto"`, models litellm knows to call tools get native tool calls, and so, on trial, do
models it does not know behind an OpenAI-compatible server (vLLM, llama.cpp, LM Studio): a server that refuses
the tools gets the text protocol (`textproto`) from then on.
"""

from __future__ import annotations

import json
import os
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelpilot.agent.textproto import as_text_protocol
from kernelpilot.errors import UsageError

REPLAY_PREFIX = "replay:"
LOCAL_PREFIX = "local:"
NUM_RETRIES = 4
"""litellm's `num_retries`: the provider SDK's own retries (openai's), then as many attempts through tenacity."""
_TOKEN_ID = re.compile(r"^token_id:(\d+)$")
_TOOLS_REFUSED = re.compile(r"\btools?\b|tool[ _]choice|function[ _]call", re.IGNORECASE)
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+: )?(?:\w+Error: )?(?:\w+Exception - )?")

DeltaSink = Callable[[str], None]


@dataclass(frozen=True)
class Reply:
    """One assistant message and what the provider said about it."""

    message: dict[str, Any]
    """OpenAI-shaped: role, content, and tool_calls (id, type, function.name, function.arguments) if any."""
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class ReplayExhausted(Exception):
    """The transcript has no more assistant messages."""


class ProviderError(Exception):
    """The provider's last answer once litellm has retried: one line, the provider's own words first."""


@dataclass
class ReplayClient:
    """Plays back recorded assistant messages in order; tools, builds and evaluations stay live.

    A transcript is a JSON file `{"messages": [{"content": ..., "tool_calls": [{"name", "arguments"}]}]}`
    (arguments may be an object or a JSON string), or a session log (`.jsonl`), whose LLM turns it replays.
    """

    path: Path
    messages: list[dict[str, Any]]
    position: int = 0
    native_tools: bool = True
    sampling: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> ReplayClient:
        if not path.is_file():
            raise UsageError(f"replay transcript not found: {path}")
        try:
            if path.suffix == ".jsonl":
                from kernelpilot.session.events import LLMTurn
                from kernelpilot.session.log import read_events

                messages = [e.response for e in read_events(path) if isinstance(e, LLMTurn)]
            else:
                messages = json.loads(path.read_text())["messages"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise UsageError(f"replay transcript {path} is not a transcript ({error})") from None
        return cls(path, [_normalise(m) for m in messages])

    def complete(self, messages: list[dict], tools: list[dict] | None, on_delta: DeltaSink) -> Reply:
        if self.position >= len(self.messages):
            raise ReplayExhausted(f"transcript {self.path.name} has no more messages")
        message = self.messages[self.position]
        self.position += 1
        for piece in re.findall(r"\S+\s*", message.get("content") or ""):
            on_delta(piece)
        return Reply(message)


def _normalise(message: dict[str, Any]) -> dict[str, Any]:
    calls = []
    for number, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function", call)
        arguments = function.get("arguments", {})
        calls.append({"id": call.get("id") or f"replay-{number}", "type": "function",
                      "function": {"name": function["name"],
                                   "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}})
    normalised = {"role": "assistant", "content": message.get("content") or ""}
    if calls:
        normalised["tool_calls"] = calls
    return normalised


def import_litellm():
    # Offline machines otherwise stall ~10 s at import fetching the price list; the bundled one is used.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    # Its "Provider List" / "Give Feedback" banners go to stdout: into `--headless`'s JSON, across the TUI.
    litellm.suppress_debug_info = True
    return litellm


def _retry_policy(litellm) -> Any:
    """litellm retries every API error; a bad key, a request the server rejects or a missing model fails alike
    every time, and should end the session at once."""
    return litellm.RetryPolicy(AuthenticationErrorRetries=0, BadRequestErrorRetries=0, NotFoundErrorRetries=0,
                               ContentPolicyViolationErrorRetries=0, DefaultRetries=NUM_RETRIES)


def _one_line(error: Exception, api_base: str | None = None) -> str:
    """`error` as one line: litellm's class prefixes dropped, the status and provider named. A server never
    reached is said so, with the address tried and the system's reason: litellm reports it as a 500
    "Connection error." that no server sent."""
    provider = getattr(error, "llm_provider", None)
    if (unreached := _connection_failure(error)) is not None:
        where = api_base or f"{provider or 'the provider'}'s server"
        return f"APIConnectionError{f' ({provider})' if provider else ''}: cannot reach {where}: {unreached}"
    text = " ".join(str(getattr(error, "message", None) or error).split())
    status = getattr(error, "status_code", None)
    origin = ", ".join(str(part) for part in (status, provider) if part)
    return f"{type(error).__name__}{f' ({origin})' if origin else ''}: {_LITELLM_PREFIX.sub('', text)}"


def _connection_failure(error: BaseException) -> str | None:
    """The system's words where `error` comes of a connection that could not be made (refused, reset, a name
    that does not resolve), found down its chain of causes; None otherwise (a timeout too: the server may be busy)."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, (ConnectionError, socket.gaierror)):
            return str(cause)
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _refuses_tools(error: Exception) -> bool:
    """A 400 about the tools themselves (vLLM started without `--enable-auto-tool-choice`, a server whose chat
    template has no tools), not about the conversation."""
    return getattr(error, "status_code", None) in (400, 422) and bool(_TOOLS_REFUSED.search(str(error)))


@dataclass
class LiteLLMClient:
    model: str
    sampling: dict[str, Any] = field(default_factory=dict)
    """temperature, top_p, max_tokens: recorded in the session log."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """Passed through to `litellm.completion` (api_base, api_key, mock_response, …)."""
    tool_protocol: str = "auto"
    tools_on_trial: bool = field(default=False, init=False)
    """Native tools offered to a model litellm does not know: its server may refuse them (then: text protocol)."""

    def __post_init__(self) -> None:
        litellm = import_litellm()
        provider = self._provider(litellm)
        if not {"api_key", "mock_response"} & set(self.options):
            environment = litellm.validate_environment(model=self.model, api_base=self.options.get("api_base"))
            missing = [key for key in environment.get("missing_keys", []) if key.endswith("_API_KEY")]
            if missing:
                raise UsageError(f"{self.model} needs {' and '.join(missing)} in the environment")
        if self.tool_protocol == "auto":
            self._choose_protocol(litellm, provider)

    def _provider(self, litellm) -> str:
        try:
            return litellm.get_llm_provider(self.model, api_base=self.options.get("api_base"))[1]
        except Exception:
            raise UsageError(f"bad model string '{self.model}': litellm cannot tell its provider "
                             "(write provider/model, e.g. anthropic/claude-sonnet-4-5, openai/gpt-4o, "
                             "ollama/qwen2.5-coder)") from None

    def _choose_protocol(self, litellm, provider: str) -> None:
        """Native tools where litellm knows the model calls them, on trial where an OpenAI-compatible server
        may (litellm knows nothing of a local vLLM's model), else the text protocol."""
        try:
            known = litellm.supports_function_calling(self.model)
        except Exception:
            known = False
        self.tools_on_trial = not known and (provider == "openai" or provider in litellm.openai_compatible_providers)
        self.tool_protocol = "native" if known or self.tools_on_trial else "text"

    @property
    def native_tools(self) -> bool:
        return self.tool_protocol == "native"

    def complete(self, messages: list[dict], tools: list[dict] | None, on_delta: DeltaSink) -> Reply:
        litellm = import_litellm()
        try:
            return self._complete(litellm, messages, tools, on_delta)
        except tuple(litellm.LITELLM_EXCEPTION_TYPES) as error:
            raise ProviderError(_one_line(error, self.options.get("api_base"))) from error

    def _complete(self, litellm, messages: list[dict], tools: list[dict] | None, on_delta: DeltaSink) -> Reply:
        if tools and self.native_tools:
            try:
                reply = self._stream(litellm, messages, tools, on_delta)
            except litellm.BadRequestError as error:
                if not (self.tools_on_trial and _refuses_tools(error)):
                    raise
                self.tool_protocol = "text"
            else:
                self.tools_on_trial = False
                return reply
        return self._stream(litellm, as_text_protocol(messages) if tools else messages, None, on_delta)

    def _stream(self, litellm, messages: list[dict], tools: list[dict] | None, on_delta: DeltaSink) -> Reply:
        request = dict(model=self.model, messages=messages, stream=True, stream_options={"include_usage": True},
                       num_retries=NUM_RETRIES, retry_strategy="exponential_backoff_retry",
                       retry_policy=_retry_policy(litellm), drop_params=True, logprobs=True,
                       **self.sampling, **self.options)
        if tools:
            request["tools"] = tools
        chunks, logprobs, tokens = [], [], []
        for chunk in litellm.completion(**request):
            chunks.append(chunk)
            choice = chunk.choices[0] if chunk.choices else None
            if choice is None:
                continue
            if choice.delta and choice.delta.content:
                on_delta(choice.delta.content)
            for item in getattr(getattr(choice, "logprobs", None), "content", None) or []:
                logprobs.append(float(item.logprob))
                tokens.append(item.token)
        response = litellm.stream_chunk_builder(chunks, messages=messages)
        message = response.choices[0].message
        assistant: dict[str, Any] = {"role": "assistant", "content": message.content or ""}
        if message.tool_calls:
            assistant["tool_calls"] = [{"id": c.id, "type": "function",
                                        "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                       for c in message.tool_calls]
        ids = [int(m.group(1)) for t in tokens if (m := _TOKEN_ID.match(t or ""))]
        usage = getattr(response, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:
            cost = 0.0  # no price known for this model (local servers)
        return Reply(assistant, token_ids=ids if ids and len(ids) == len(tokens) else None,
                     logprobs=logprobs or None,
                     prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                     completion_tokens=getattr(usage, "completion_tokens", 0) or 0, cost_usd=cost)


def make_client(model: str, sampling: dict[str, Any], options: Mapping[str, Any], tool_protocol: str = "auto"):
    """A `ReplayClient` for `replay:PATH`, a `local_model.LocalClient` for `local:NAME_OR_PATH[+ADAPTER]`, else a
    `LiteLLMClient`; raises `UsageError` for a bad model string."""
    if model.startswith(REPLAY_PREFIX):
        return ReplayClient.load(Path(model[len(REPLAY_PREFIX):]).expanduser())
    if model.startswith(LOCAL_PREFIX):
        from kernelpilot.agent.local_model import LocalClient  # imports transformers: only when asked for

        return LocalClient.load(model[len(LOCAL_PREFIX):], dict(sampling))
    if not model.strip() or any(c.isspace() for c in model):
        raise UsageError(f"bad model string '{model}'")
    return LiteLLMClient(model, dict(sampling), options, tool_protocol)
