"""Manual mode's editor command: the user's editor, as git finds it, on the files whose saves are evaluated."""

from __future__ import annotations

from pathlib import Path

from kernelpilot.tui.editor import editor_command


def test_the_editor_opens_model_new_and_every_kernel_from_the_workspace(tmp_path: Path):
    (tmp_path / "kernels" / "sub").mkdir(parents=True)
    for name in ("b.cu", "a.cpp", "sub/c.cuh"):
        (tmp_path / "kernels" / name).write_text("")
    files = ["model_new.py", "kernels/a.cpp", "kernels/b.cu", "kernels/sub/c.cuh"]
    assert editor_command(tmp_path, {"EDITOR": "code --wait"}) == ["code", "--wait", *files]
    assert editor_command(tmp_path, {"VISUAL": "nvim", "EDITOR": "nano"}) == ["nvim", *files]
    assert editor_command(tmp_path, {"EDITOR": ""}) == ["vi", *files]
