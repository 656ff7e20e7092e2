"""Configuration precedence: defaults < user config < ./kernelpilot.toml < KERNELPILOT_MODEL < flags."""

from __future__ import annotations

import pytest

from kernelpilot.config import load_config
from kernelpilot.errors import UsageError


@pytest.fixture
def homes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    user = tmp_path / "config" / "kernelpilot" / "config.toml"
    user.parent.mkdir(parents=True)
    project = tmp_path / "project"
    project.mkdir()
    return user, project


def test_precedence(homes):
    user, project = homes
    user.write_text('model = "openai/gpt-4o"\nmax_turns = 10\ntemperature = 0.5\n[keys]\naccept = "ctrl+a"\n'
                    '[shell]\ndefault = "deny"\nallow = ["nvcc *"]\n')
    (project / "kernelpilot.toml").write_text('max_turns = 20\napi_base = "http://localhost:8000/v1"\n')
    config = load_config(project, environ={})
    assert (config.model, config.max_turns, config.api_base) == ("openai/gpt-4o", 20, "http://localhost:8000/v1")
    assert config.sampling == {"temperature": 0.5}
    assert (config.shell_default, config.shell_allow) == ("deny", ("nvcc *",))
    config = load_config(project, environ={"KERNELPILOT_MODEL": "ollama/qwen2.5-coder"})
    assert config.model == "ollama/qwen2.5-coder"
    assert config.override(model="anthropic/claude-sonnet-4-5", max_turns=None).model == "anthropic/claude-sonnet-4-5"
    assert config.override(max_turns=None).max_turns == 20


def test_bad_values_are_user_errors(homes):
    user, project = homes
    user.write_text('[shell]\ndefault = "maybe"\n')
    with pytest.raises(UsageError, match="default must be one of"):
        load_config(project, environ={})
    user.write_text("model = \n")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_config(project, environ={})
