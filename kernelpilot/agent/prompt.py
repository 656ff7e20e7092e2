"""The opening of every conversation: the skill as the system prompt, the task as the first user message."""

from __future__ import annotations

from typing import Any

from kernelpilot.agent.skills import Skill
from kernelpilot.agent.textproto import protocol_instructions
from kernelpilot.session.workspace import KERNELS_DIR, MODEL_FILE, TASK_FILE

KERNEL_SUFFIX = {"cuda": ".cu", "cpu": ".cpp"}


def opening_messages(skill: Skill, task_source: str, device: str, policy: str,
                     native_tools: bool) -> list[dict[str, Any]]:
    system = skill.text if native_tools else skill.text + "\n\n" + protocol_instructions()
    task = (
        f"# Task\n\nMake the model in `{TASK_FILE}` faster on the **{device}** backend (policy: `{policy}`).\n"
        f"Write your kernels as `{KERNELS_DIR}/*{KERNEL_SUFFIX[device]}` and `{MODEL_FILE}` with `class ModelNew`, "
        f"call `evaluate` to have the harness build, verify and time them, iterate, and call `done` when finished.\n\n"
        f"`{TASK_FILE}` (read-only):\n```python\n{task_source.rstrip()}\n```\n"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": task}]
