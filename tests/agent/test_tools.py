"""The file tools stay inside the workspace: no `..`, no absolute paths, no symlinks out, no task or .git writes."""

from __future__ import annotations

import os

import pytest

from kernelpilot.agent.tools import TOOL_SPECS, TOOLS, FileTools, ToolError, ToolOutcome, call_tool


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "workspace"
    (root / "kernels").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "task.py").write_text("class Model: ...\n")
    (root / "model_new.py").write_text("a = 1\nb = 2\nb = 2\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return FileTools(root, protected=("task.py",)), root, outside


@pytest.mark.parametrize("path", ["../outside/x.txt", "kernels/../../outside/x.txt", "/tmp/kernelpilot-escape.txt"])
def test_writes_outside_the_workspace_are_refused(workspace, path):
    tools, root, outside = workspace
    with pytest.raises(ToolError):
        tools.write(path, "pwned")
    assert not (outside / "x.txt").exists() and not os.path.exists("/tmp/kernelpilot-escape.txt")


def test_symlinks_that_lead_out_are_refused(workspace):
    tools, root, outside = workspace
    (root / "kernels" / "link").symlink_to(outside)
    (root / "secret_link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.write("kernels/link/x.cpp", "pwned")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.write("secret_link.txt", "pwned")
    with pytest.raises(ToolError, match="outside the workspace"):
        tools.read("secret_link.txt")
    assert (outside / "secret.txt").read_text() == "secret\n" and not (outside / "x.cpp").exists()


def test_task_copy_and_git_are_read_only(workspace):
    tools, root, _ = workspace
    for path in ("task.py", ".git/config", "kernels/../task.py"):
        with pytest.raises(ToolError, match="read-only"):
            tools.write(path, "pwned")
    with pytest.raises(ToolError, match="read-only"):
        tools.edit("task.py", "Model", "Hacked")
    assert (root / "task.py").read_text() == "class Model: ...\n"
    assert "Model" in tools.read("task.py")


def test_write_creates_folders_and_list_and_grep_see_it(workspace):
    tools, root, _ = workspace
    tools.write("kernels/sub/add.cpp", 'extern "C" void add() {}\n')
    assert (root / "kernels" / "sub" / "add.cpp").is_file()
    assert "kernels/sub/add.cpp" in tools.list().splitlines()
    assert ".git" not in tools.list()
    assert tools.grep(r"extern \"C\"") == 'kernels/sub/add.cpp:1: extern "C" void add() {}'


def test_edit_replaces_exactly_one_occurrence(workspace):
    tools, root, _ = workspace
    tools.edit("model_new.py", "a = 1", "a = 3")
    assert (root / "model_new.py").read_text().startswith("a = 3\n")
    with pytest.raises(ToolError, match="occurs 2 times"):
        tools.edit("model_new.py", "b = 2", "b = 4")
    with pytest.raises(ToolError, match="occurs 0 times"):
        tools.edit("model_new.py", "zzz", "b = 4")


class FilesOnly:
    """A host that has files and nothing else: what the file tools act on."""

    def __init__(self, files: FileTools) -> None:
        self.files = files


def test_every_call_is_dispatched_through_the_registry_and_bad_calls_come_back_to_the_model(workspace):
    tools, root, _ = workspace
    host = FilesOnly(tools)
    assert [spec.name for spec in TOOL_SPECS] == list(TOOLS) == [
        "read", "write", "edit", "list", "grep", "evaluate", "shell", "done"]
    assert call_tool(host, "write", {"path": "kernels/a.cpp", "content": "int a;\n"}) == ToolOutcome(
        "wrote kernels/a.cpp (2 lines)", True)
    unknown = call_tool(host, "frobnicate", {"path": "task.py"})
    assert not unknown.ok and unknown.invalid_call and unknown.output.startswith("unknown tool 'frobnicate' (have: read,")
    missing = call_tool(host, "edit", {"path": "model_new.py", "old": "a"})
    assert not missing.ok and missing.invalid_call and "edit: bad arguments" in missing.output
    assert call_tool(host, "write", {"path": "kernels", "content": "x"}).output.startswith("write: ")
