"""Tool calls for models without native tool calling: fenced JSON blocks in the assistant's text.

    ```json
    {"tool": "write", "arguments": {"path": "kernels/add.cpp", "content": "..."}}
    ```
"""

from __future__ import annotations

import json
import re

from kernelpilot.agent.tools import TOOL_SPECS

_FENCED = re.compile(r"```(?:json|tool)?[ \t]*\n(.*?)\n[ \t]*```", re.S)


def parse_tool_calls(text: str, turn: int) -> list[dict]:
    """Tool calls found in `text`, in the native shape (`id`, `function.name`, `function.arguments`)."""
    calls = []
    for block in _FENCED.findall(text or ""):
        try:
            data = json.loads(block)
        except json.JSONDecodeError:
            continue
        name = data.get("tool") or data.get("name") if isinstance(data, dict) else None
        if not isinstance(name, str):
            continue
        arguments = data.get("arguments", {})
        calls.append({"id": f"text-{turn}-{len(calls)}", "type": "function",
                      "function": {"name": name, "arguments": json.dumps(arguments)}})
    return calls


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
