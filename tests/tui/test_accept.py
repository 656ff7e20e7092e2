"""Accept / undo in the user's project, without the UI: files, hunks, git commits."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult
from kernelpilot.session.accept import Project, apply_hunks, hunks, single_file, standalone_workspace

MODEL = """from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    pass
"""
ACCEPTED_MODEL = standalone_workspace({"model_new.py": MODEL})["model_new.py"]
"""As the workspace form writes it: the kernel loader embedded (it runs with torch alone)."""
KERNEL = 'extern "C" void k(float* x) {}\n'
PLAIN = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    pass\n"
"""A candidate without kernels of its own: its single file is itself."""
RESULT = EvalResult(task="model.py", candidate="c1", device="cpu", built=True, correct=True, reward=2,
                    times_ms={"eager": 2.0, "compile": 1.5, "candidate": 1.0}, speedup_vs_eager=2.0,
                    speedup_vs_compile=1.5)


@pytest.fixture
def repo(tmp_path: Path) -> git.Repo:
    repo = git.Repo.init(tmp_path, initial_branch="main")
    repo.config_writer().set_value("user", "name", "t").set_value("user", "email", "t@t").release()
    (tmp_path / "model.py").write_text("# task\n")
    repo.git.add("model.py")
    repo.git.commit("-m", "task")
    return repo


def test_hunks_apply_only_the_chosen_ones():
    old = {"a.txt": "".join(f"{i}\n" for i in range(20))}
    new = {"a.txt": old["a.txt"].replace("1\n", "one\n", 1).replace("18\n", "eighteen\n"), "b.txt": "new\n"}
    found = hunks(old, new)
    assert [h.id for h in found] == ["a.txt#0", "a.txt#1", "b.txt#0"]
    assert "+one" in found[0].lines and "-1" in found[0].lines
    assert apply_hunks(old, new, ["a.txt#1"]) == {"a.txt": old["a.txt"].replace("18\n", "eighteen\n")}
    assert apply_hunks(old, new, [h.id for h in found]) == new
    assert apply_hunks(new, {}, ["b.txt#0"]) == {"a.txt": new["a.txt"]}


def test_a_chosen_hunk_keeps_the_lines_beyond_its_context():
    """A hunk in the middle of a file: the lines more than CONTEXT_LINES away from it, before and after, stay."""
    old = {"k.cpp": "".join(f"{i}\n" for i in range(15))}
    new = {"k.cpp": old["k.cpp"].replace("7\n", "")}
    [only] = hunks(old, new)
    assert apply_hunks(old, new, [only.id]) == new
    assert apply_hunks(new, old, [hunks(new, old)[0].id]) == old


def test_single_file_embeds_kernels_and_loads_them_from_sources():
    text = single_file({"model_new.py": MODEL, "kernels/k.cu": KERNEL})
    assert "load_kernel_sources(SOURCES)" in text and "'k.cu'" in text
    assert "load_kernels(" not in text
    compile(text, "model_new.py", "exec")


def test_accept_commits_on_the_session_branch_without_moving_head(repo: git.Repo):
    root = Path(repo.working_tree_dir)
    head = repo.head.commit.hexsha
    project = Project(root / "model.py", "s1")
    done = project.accept(1, {"model_new.py": MODEL, "kernels/k.cu": KERNEL}, RESULT)
    assert (root / "model_kernelpilot" / "kernels" / "k.cu").read_text() == KERNEL
    assert repo.active_branch.name == "main" and repo.head.commit.hexsha == head
    assert done.branch == "kernelpilot/s1" and repo.heads["kernelpilot/s1"].commit.hexsha == done.commit
    commit = repo.commit(done.commit)
    assert commit.parents[0].hexsha == head
    assert "status: correct, reward 2" in commit.message and "speedup vs eager 2.00×" in commit.message
    assert set(commit.stats.files) == {"model_kernelpilot/model_new.py", "model_kernelpilot/kernels/k.cu"}
    second = project.accept(2, {"model_new.py": MODEL + "# faster\n", "kernels/k.cu": KERNEL}, RESULT)
    assert repo.commit(second.commit).parents[0].hexsha == done.commit
    assert repo.active_branch.name == "main" and repo.head.commit.hexsha == head


def test_a_partial_accept_is_committed_as_not_evaluated(repo: git.Repo):
    root = Path(repo.working_tree_dir)
    project = Project(root / "model.py", "s1")
    files = {"model_new.py": MODEL, "kernels/k.cu": KERNEL}
    done = project.accept(3, files, RESULT, chosen_hunks=["kernels/k.cu#0"])
    assert not done.evaluated and done.files == {"kernels/k.cu": KERNEL}
    message = repo.commit(done.commit).message
    assert "chosen hunks of candidate 3" in message and "status: not evaluated" in message
    assert "reward" not in message and "status: correct" not in message
    whole = project.accept(3, files, RESULT, chosen_hunks=["model_new.py#0"])
    assert whole.evaluated and "status: correct, reward 2" in repo.commit(whole.commit).message



def test_chosen_hunks_without_the_model_are_no_single_file(repo: git.Repo):
    root = Path(repo.working_tree_dir)
    project = Project(root / "model.py", "s1")
    with pytest.raises(SessionError, match="the chosen hunks leave out model_new.py"):
        project.accept(3, {"model_new.py": MODEL, "kernels/k.cu": KERNEL}, RESULT, form="single",
                       chosen_hunks=["kernels/k.cu#0"])
    assert not project.history and not (root / "model_new.py").exists()

def test_accept_leaves_the_users_other_staged_work_alone(repo: git.Repo):
    root = Path(repo.working_tree_dir)
    (root / "notes.txt").write_text("mine\n")
    repo.git.add("notes.txt")
    done = Project(root / "model.py", "s1").accept(1, {"model_new.py": PLAIN}, RESULT, form="single")
    assert set(repo.commit(done.commit).stats.files) == {"model_new.py"}
    assert "notes.txt" in repo.git.diff("--cached", "--name-only")
    assert (root / "model_new.py").exists()


def test_undo_restores_the_tree_and_records_a_commit(repo: git.Repo):
    root = Path(repo.working_tree_dir)
    project = Project(root / "model.py", "s1")
    project.accept(1, {"model_new.py": MODEL}, RESULT)
    project.accept(2, {"model_new.py": MODEL + "# faster\n"}, RESULT)
    project.undo()
    assert (root / "model_kernelpilot" / "model_new.py").read_text() == ACCEPTED_MODEL
    project.undo()
    assert not (root / "model_kernelpilot").exists()
    assert repo.heads["kernelpilot/s1"].commit.message.startswith("kernelpilot: undo accept of candidate 1")
    assert "model_kernelpilot" not in [t.name for t in repo.heads["kernelpilot/s1"].commit.tree.trees]
    assert repo.active_branch.name == "main"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout == ""



def test_accept_commits_where_git_knows_no_user(tmp_path: Path, monkeypatch):
    """A fresh machine: no ~/.gitconfig, no user.email, a host name git cannot make an address from."""
    home = tmp_path / "home"
    home.mkdir()
    for name, value in {"HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
                        "EMAIL": ""}.items():
        monkeypatch.setenv(name, value)
    repo = git.Repo.init(tmp_path / "project", initial_branch="main")
    root = Path(repo.working_tree_dir)
    (root / "model.py").write_text("# task\n")
    done = Project(root / "model.py", "s1").accept(1, {"model_new.py": PLAIN}, RESULT, form="single")
    assert repo.heads["kernelpilot/s1"].commit.hexsha == done.commit
    assert repo.active_branch.name == "main" and not repo.head.is_valid(), "HEAD stays unborn"


def test_an_accept_that_cannot_be_committed_writes_nothing_and_says_why_in_one_line(repo: git.Repo):
    root = Path(repo.working_tree_dir)
    project = Project(root / "model.py", "s1")
    project.accept(1, {"model_new.py": MODEL}, RESULT)
    (Path(repo.git_dir) / "refs" / "heads" / "kernelpilot" / "s1.lock").write_text("")  # another git at work
    with pytest.raises(SessionError) as raised:
        project.accept(2, {"model_new.py": MODEL + "# faster\n", "kernels/k.cu": KERNEL}, RESULT)
    assert "\n" not in str(raised.value) and "kernelpilot/s1" in str(raised.value), str(raised.value)
    assert "lock" in str(raised.value)
    assert (root / "model_kernelpilot" / "model_new.py").read_text() == ACCEPTED_MODEL
    assert not (root / "model_kernelpilot" / "kernels").exists()
    assert [done.candidate_id for done in project.history] == [1]

def test_accept_outside_git_only_writes_files(tmp_path: Path):
    (tmp_path / "model.py").write_text("# task\n")
    done = Project(tmp_path / "model.py", "s1").accept(3, {"model_new.py": PLAIN}, None, form="single")
    assert done.commit is None and (tmp_path / "model_new.py").read_text() == PLAIN
