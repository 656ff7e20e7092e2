"""Skills: the shipped ones teach the workspace form; a user's own skill directory becomes the system prompt."""

from __future__ import annotations

import pytest
from agent_helpers import TASK
from transcripts import write_transcript

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.skills import find_skill
from kernelpilot.errors import UsageError
from kernelpilot.session.events import LLMTurn
from kernelpilot.session.log import read_events


@pytest.mark.parametrize("name, suffix", [("cuda", ".cu"), ("cpu", ".cpp")])
def test_shipped_skills_teach_the_workspace_form(name, suffix):
    text = find_skill(name).text
    assert "from kernelpilot.harness.kernels import load_kernels" in text
    assert 'extern "C"' in text and f"kernels/<name>{suffix}" in text
    for tool in ("read", "write", "edit", "list", "grep", "evaluate", "shell", "done"):
        assert f"`{tool}(" in text


def test_a_skill_directory_is_the_system_prompt_with_the_task(tmp_path):
    skill = tmp_path / "my-skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("Write AVX-512 intrinsics only.\n")
    path = write_transcript(tmp_path, ("", [("done", {})]))
    settings = SessionSettings(task_path=TASK, model=f"replay:{path}", skill=str(skill), device="cpu",
                               sessions_root=tmp_path / "sessions")
    controller = SessionController(settings, lambda event: None)
    controller.run()
    (turn,) = [e for e in read_events(controller.session.log_path) if isinstance(e, LLMTurn)]
    system, task = turn.new_messages[:2]
    assert system == {"role": "system", "content": "Write AVX-512 intrinsics only.\n"}
    assert "class Model(nn.Module)" in task["content"] and "cpu" in task["content"]


def test_unknown_skill_names_the_known_ones():
    with pytest.raises(UsageError, match=r"unknown skill 'fortran' \(have: .*cpu, cuda"):
        find_skill("fortran")
