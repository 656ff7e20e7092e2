"""Bad input to `optimize` and `sessions` is one line on stderr and exit 2, never a traceback."""

from __future__ import annotations

import pytest
from agent_helpers import TASK, TRANSCRIPT

from kernelpilot.cli import main

CASES = {
    "missing task file": (["optimize", "no_such_model.py", "--headless"], "task file not found"),
    "unknown skill": (["optimize", str(TASK), "--skill", "fortran", "--headless"], "unknown skill 'fortran'"),
    "bad model string": (["optimize", str(TASK), "--model", "gpt 4", "--headless"], "bad model string"),
    "missing replay file": (["optimize", str(TASK), "--model", "replay:missing.json", "--headless"],
                            "replay transcript not found"),
    "unknown session to resume": (["optimize", "--resume", "nope", "--headless"], "unknown session 'nope'"),
    "unknown session to show": (["sessions", "show", "nope"], "unknown session 'nope'"),
    "no task and no resume": (["optimize", "--headless"], "give a task file"),
}


@pytest.mark.parametrize("argv, message", CASES.values(), ids=CASES.keys())
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    assert not (tmp_path / ".kernelpilot" / "sessions").exists() or argv[0] == "sessions"


def test_missing_provider_key_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["optimize", str(TASK), "--model", "anthropic/claude-sonnet-4-5", "--headless"]) == 2
    assert "needs ANTHROPIC_API_KEY in the environment" in capsys.readouterr().err


def test_bad_config_file_is_a_user_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernelpilot.toml").write_text('modle = "openai/gpt-4o"\n')
    assert main(["optimize", str(TASK), "--model", f"replay:{TRANSCRIPT}", "--headless"]) == 2
    assert "unknown setting 'modle'" in capsys.readouterr().err
