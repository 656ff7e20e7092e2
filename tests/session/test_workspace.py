"""The git workspace: read-only task copy, a commit per candidate with its result as a note, diffs from git."""

from __future__ import annotations

import json
import stat
import threading

import pytest

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult
from kernelpilot.harness.task_files import sha256_file
from kernelpilot.session.state import CandidateRecord, best_of
from kernelpilot.session.store import locate
from kernelpilot.session.workspace import Workspace

TASK_SOURCE = "class Model: ...\n"


@pytest.fixture
def workspace(tmp_path):
    task = tmp_path / "model.py"
    task.write_text(TASK_SOURCE)
    return Workspace.create(tmp_path / "ws", task, {}), sha256_file(task)


def test_task_copy_is_read_only_and_hash_checked(workspace):
    ws, sha = workspace
    assert not ws.task_copy.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    assert ws.task_intact(sha)
    ws.task_copy.chmod(0o644)
    ws.task_copy.write_text("class Model: pass  # tampered\n")
    assert not ws.task_intact(sha)


def test_candidates_are_commits_with_results_and_diffs(workspace):
    ws, _ = workspace
    (ws.root / "model_new.py").write_text("v = 1\n")
    (ws.root / "kernels" / "k.cpp").write_text("int a;\n")
    (ws.root / "notes.md").write_text("scratch\n")
    first = ws.snapshot("candidate 1")
    result = EvalResult(task="t", candidate="c", device="cpu", built=True, correct=True, reward=2)
    ws.attach_result(first, result)
    (ws.root / "kernels" / "k.cpp").write_text("int b;\n")
    second = ws.snapshot("candidate 2")
    assert EvalResult.from_json(json.loads(ws.repo.git.notes("show", first))) == result
    assert ws.files_at(first) == {"model_new.py": "v = 1\n", "kernels/k.cpp": "int a;\n"}
    diff = ws.diff(first, second)
    assert "-int a;" in diff and "+int b;" in diff and "model_new.py" not in diff
    assert "+v = 1" in ws.diff(None, second) and "notes.md" not in ws.diff(None, second)
    assert ws.snapshot("candidate 3") != second, "re-evaluating unchanged files is still its own candidate"



def test_threads_reading_candidates_at_once_each_get_their_own_files(workspace):
    """The app loads the selected candidate's files while the agent's evaluation exports the next one."""
    ws, _ = workspace
    (ws.root / "model_new.py").write_text("v = 1\n" * 200)
    for number in range(5):
        (ws.root / "kernels" / f"k{number}.cpp").write_text(f"int a{number};\n" * 300)
    first = ws.snapshot("candidate 1")
    (ws.root / "kernels" / "k0.cpp").write_text("int b;\n")
    second = ws.snapshot("candidate 2")
    expected = {commit: ws.files_at(commit) for commit in (first, second)}
    errors: list[Exception] = []

    def read(commit: str) -> None:
        try:
            for _ in range(100):
                assert ws.files_at(commit) == expected[commit]
                assert ws.head_message().strip() == "candidate 2"
        except Exception as error:  # noqa: BLE001 - collected for the assertion below
            errors.append(error)

    readers = [threading.Thread(target=read, args=(commit,)) for commit in (first, second, first)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    assert errors == []

def test_best_is_the_fastest_correct_clean_candidate():
    def record(i, correct, vs_compile):
        return CandidateRecord(i, f"c{i}", EvalResult(task="t", candidate="c", device="cpu", built=True,
                                                      correct=correct, reward=1, speedup_vs_compile=vs_compile))

    assert best_of([record(1, True, 0.9), record(2, False, 5.0), record(3, True, 1.2)]).candidate_id == 3
    assert best_of([record(1, False, 2.0)]) is None


def test_unknown_session_is_a_user_error(tmp_path):
    with pytest.raises(SessionError, match="unknown session 'nope'"):
        locate("nope", tmp_path)
