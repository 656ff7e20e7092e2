"""Tool calls for models without native tool calling: fenced JSON blocks in the assistant's text.

    ```json
    {"tool": "write", "arguments": {"path": "kernels/add.cpp", "content": "..."}}
    ```
"""

from __future__ import annotations

import dataclasses
import json
import re
from itertools import groupby

from kernelpilot.agent.tools import TOOL_SPECS
from kernelpilot.finetune.trajectory import Trajectory

_FENCED = re.compile(r"```(?:json|tool)?[ \t]*\n(.*?)\n[ \t]*```", re.S)


def _tool_call(block: str) -> tuple[str, object] | None:
    """(tool name, arguments) when a fenced block is a tool call."""
    try:
        data = json.loads(block)
    except json.JSONDecodeError:
        return None
    name = data.get("tool") or data.get("name") if isinstance(data, dict) else None
    return (name, data.get("arguments", {})) if isinstance(name, str) else None


def parse_tool_calls(text: str, turn: int) -> list[dict]:
    """Tool calls found in `text`, in the native shape (`id`, `function.name`, `function.arguments`)."""
    calls = []
    for name, arguments in filter(None, map(_tool_call, _FENCED.findall(text or ""))):
        calls.append({"id": f"text-{turn}-{len(calls)}", "type": "function",
                      "function": {"name": name, "arguments": json.dumps(arguments)}})
    return calls


def without_tool_calls(text: str) -> str:
    """`text` less its tool-call blocks: what a reader of the transcript wants, the calls being shown apart."""
    prose = _FENCED.sub(lambda match: "" if _tool_call(match[1]) else match[0], text)
    return re.sub(r"\n{3,}", "\n\n", prose).strip()


def tool_call_block(name: str, arguments: str) -> str:
    """A native call (`arguments` as JSON text) as the fenced block the text protocol reads."""
    try:
        parsed = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        parsed = arguments  # the model's own malformed arguments, kept for it to see
    return "```json\n" + json.dumps({"tool": name, "arguments": parsed}) + "\n```"


def as_text_protocol(messages: list[dict]) -> list[dict]:
    """`messages` for a model that gets no native tools (a server that refused them, mid-session too): the
    protocol taught in the system prompt, earlier native calls as fenced blocks, and each turn's results as one
    user message, as `Conversation` writes them (chat templates want user and assistant to alternate)."""
    instructions = protocol_instructions()
    converted: list[dict] = []
    for are_results, group in groupby(messages, key=lambda message: message["role"] == "tool"):
        if are_results:
            converted.append({"role": "user", "content": "\n\n".join(
                f"Result of `{m.get('name', 'tool')}` ({m['tool_call_id']}):\n{m['content']}" for m in group)})
        else:
            converted.extend(_in_text(message, instructions) for message in group)
    return converted


def trajectory_in_text_protocol(trajectory: Trajectory) -> Trajectory:
    """`trajectory` as a model without native tools would have seen and written it (`as_text_protocol`): what a local
    model is finetuned on when the sessions came from models with native tool calls (hosted ones, replays). The
    conversion keeps each turn's context a prefix of the next one's; sessions in the text protocol (local models')
    come back unchanged, token ids and logprobs with them."""
    turns = []
    for turn in trajectory.turns:
        *context, response = as_text_protocol([*turn.context, turn.response])
        turns.append(dataclasses.replace(turn, context=context, response=response))
    return dataclasses.replace(trajectory, turns=tuple(turns))


def _in_text(message: dict, instructions: str) -> dict:
    if message["role"] == "system" and instructions not in message["content"]:
        return {**message, "content": message["content"] + "\n\n" + instructions}
    if not message.get("tool_calls"):
        return message
    blocks = [tool_call_block(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
    return {"role": "assistant", "content": "\n\n".join(filter(None, [message.get("content"), *blocks]))}


def protocol_instructions() -> str:
    """Appended to the system prompt when the model gets no native tools."""
    lines = ["# How to call tools",
             "Call a tool by writing a fenced JSON block; you may write several in one message. "
             "Results come back in the next user message.",
             "```json", '{"tool": "read", "arguments": {"path": "task.py"}}', "```", "", "Tools:"]
    for spec in TOOL_SPECS:
        params = ", ".join(f"{name}{'' if name in spec.required else '?'}" for name in spec.parameters)
        lines.append(f"- {spec.name}({params}): {spec.description}")
    return "\n".join(lines)
