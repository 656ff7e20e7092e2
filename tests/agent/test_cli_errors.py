"""Bad input to `optimize` and `sessions` is one line on stderr and exit 2, never a traceback, and no session."""

from __future__ import annotations

import io

import pytest
from agent_helpers import REPO, TASK, TRANSCRIPT

from kernelpilot.cli import main
from kernelpilot.harness.result import EvalResult
from kernelpilot.session.session import Session

CASES = {
    "missing task file": (["optimize", "no_such_model.py", "--headless"], "task file not found"),
    "unknown skill": (["optimize", str(TASK), "--skill", "fortran", "--headless"], "unknown skill 'fortran'"),
    "bad model string": (["optimize", str(TASK), "--model", "gpt 4", "--headless"], "bad model string"),
    "missing replay file": (["optimize", str(TASK), "--model", "replay:missing.json", "--headless"],
                            "replay transcript not found"),
    "unknown session to resume": (["optimize", "--resume", "nope", "--headless"], "unknown session 'nope'"),
    "unknown session to show": (["sessions", "show", "nope"], "unknown session 'nope'"),
    "no task and no resume": (["optimize", "--headless"], "give a task file"),
    "negative turn budget": (["optimize", str(TASK), "--max-turns", "-1", "--headless"],
                             "--max-turns (max_turns) must be a whole number of at least 1, not -1"),
    "no turns at all": (["optimize", str(TASK), "--max-turns", "0", "--headless"], "at least 1, not 0"),
    "negative dollar budget": (["optimize", str(TASK), "--budget-usd", "-5", "--headless"],
                               "--budget-usd (budget_usd) must be a positive, finite number, not -5.0"),
    "NaN dollar budget": (["optimize", str(TASK), "--budget-usd", "nan", "--headless"], "not nan"),
    "infinite wall time": (["optimize", str(TASK), "--max-minutes", "inf", "--headless"],
                           "--max-minutes (max_minutes) must be a positive, finite number, not inf"),
}


BROKEN_TASKS = {
    "forward raises": ("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                       "        return x @ torch.ones(3, 3)\n\ndef get_inputs():\n    return [torch.randn(4, 5)]\n\n"
                       "def get_init_inputs():\n    return []\n",
                       "task broken.py: RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x5 and 3x3)"),
    "import fails": ("import no_such_module\n\nclass Model: pass\n\ndef get_inputs(): pass\n\n"
                     "def get_init_inputs(): pass\n",
                     "task broken.py failed to import: ModuleNotFoundError: No module named 'no_such_module'"),
    "kills the judge's keeper": ((REPO / "tests" / "harness" / "cases" / "keeper_dies.py").read_text(),
                                 "the judge could not make the task's references: the judge's reference keeper "
                                 "exited (status 3)"),
}


def assert_one_line_exit_2(argv, message, tmp_path, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    assert not (tmp_path / ".kernelpilot" / "sessions").exists() or argv[0] == "sessions"


@pytest.mark.parametrize("argv, message", CASES.values(), ids=CASES.keys())
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert_one_line_exit_2(argv, message, tmp_path, capsys)


@pytest.mark.parametrize("source, message", BROKEN_TASKS.values(), ids=BROKEN_TASKS.keys())
def test_a_task_that_does_not_run_ends_before_any_model_turn(source, message, tmp_path, monkeypatch, capsys):
    """The harness's task check runs first, as `kernelpilot eval` would say it; the replayed model never speaks."""
    monkeypatch.chdir(tmp_path)
    task = tmp_path / "broken.py"
    task.write_text(source)
    assert_one_line_exit_2(["optimize", str(task), "--model", f"replay:{TRANSCRIPT}", "--headless"], message,
                           tmp_path, capsys)
    assert main(["eval", str(task), str(TASK), "--device", "cpu"]) == 2
    assert message in capsys.readouterr().err, "the same words as `kernelpilot eval`"


@pytest.fixture
def exportable(tmp_path):
    """A session whose one candidate is correct, made without an agent or a harness: (its root, its id)."""
    session = Session.create(tmp_path / "sessions", TASK, skill="cpu", model=f"replay:{TRANSCRIPT}", sampling={},
                             device="cpu", policy="strict", starter={"model_new.py": "v = 0\n"},
                             on_event=lambda event: None)
    (session.workspace_dir / "model_new.py").write_text("v = 1\n")
    candidate_id, commit = session.next_candidate()
    session.add_evaluation(candidate_id, commit, EvalResult(task="model.py", candidate="c", device="cpu", built=True,
                                                            correct=True, reward=3, speedup_vs_compile=1.2))
    return tmp_path / "sessions", session.session_id


SESSIONS_PATHS = {
    "single file into a folder": (["export", "ID", "--out", "FOLDER"], "--out FOLDER: is a folder, not a file"),
    "workspace onto a file": (["export", "ID", "--format", "workspace", "--out", "FILE"],
                              "--out FILE: is a file, not a folder"),
    "workspace under a file": (["export", "ID", "--format", "workspace", "--out", "FILE/ws"],
                               "--out FILE/ws: FILE is a file, not a folder"),
    "root that is a file": (["list", "--root", "FILE"], "--root FILE: is a file, not a folder"),
    "list given a session id": (["list", "ID"], "'sessions list' takes no session id (got 'ID')"),
}


@pytest.mark.parametrize("argv, message", SESSIONS_PATHS.values(), ids=SESSIONS_PATHS.keys())
def test_sessions_paths_of_the_wrong_kind_are_one_line_and_exit_2(argv, message, exportable, tmp_path, capsys):
    """Checked before anything is written: the file and the folder in the way are left as they were."""
    root, session_id = exportable
    (tmp_path / "FOLDER").mkdir()
    (tmp_path / "FILE").write_text("kept\n")
    names = {"ID": session_id, "FOLDER": str(tmp_path / "FOLDER"), "FILE": str(tmp_path / "FILE")}

    def named(text: str) -> str:
        for name, value in names.items():
            text = text.replace(name, value)
        return text

    with_root = [] if "--root" in argv else ["--root", str(root)]
    assert_one_line_exit_2(["sessions", *map(named, argv), *with_root], named(message), tmp_path, capsys)
    assert not any((tmp_path / "FOLDER").iterdir()) and (tmp_path / "FILE").read_text() == "kept\n"


def test_a_missing_task_is_named_as_eval_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "nonexist.py", "candidate.py", "--device", "cpu"]) == 2
    said_by_eval = capsys.readouterr().err
    assert said_by_eval == f"kernelpilot: task file not found: {tmp_path.resolve() / 'nonexist.py'}\n"
    assert_one_line_exit_2(["optimize", "nonexist.py", "--headless"], said_by_eval, tmp_path, capsys)


def test_sessions_help_explains_each_action(capsys):
    """The `list | show ID | export ID` forms are in `--help`, not only in the README."""
    with pytest.raises(SystemExit) as exited:
        main(["sessions", "--help"])
    help_text = capsys.readouterr().out
    assert exited.value.code == 0 and "Read the sessions" in help_text
    assert all(f"\n  {form}  " in help_text for form in ("list     ", "show ID  ", "export ID"))


def test_manual_mode_without_a_terminal_is_refused(tmp_path, monkeypatch, capsys):
    """Headless, no model, stdin not a terminal: nobody could save a candidate or press Ctrl-C."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KERNELPILOT_MODEL", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO())
    assert_one_line_exit_2(["optimize", str(TASK), "--headless"], "no model and no terminal: manual mode would "
                           "wait for saves forever (give --model, or --max-minutes", tmp_path, capsys)


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


def test_headless_progress_says_the_provider_error_in_one_line():
    """stderr is not a terminal: rich would wrap a long line at 80 columns, splitting the provider's error."""
    from rich.console import Console
    from rich.progress import Progress

    from kernelpilot.commands.optimize import Reporter
    from kernelpilot.session.events import SessionEnded

    out = io.StringIO()
    reason = ("llm_error: ProviderError: APIConnectionError (openai): cannot reach http://127.0.0.1:9/v1: "
              "[Errno 111] Connection refused")
    Reporter(Progress(console=Console(file=out, width=80)))(SessionEnded(reason=reason))
    assert out.getvalue() == f"session ended: {reason}\n"
