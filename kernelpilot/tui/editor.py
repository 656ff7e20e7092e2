"""Manual mode's way to the user's own editor: the command that opens the workspace's candidate files."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from kernelpilot.session.workspace import KERNELS_DIR, MODEL_FILE

FALLBACK_EDITOR = "vi"
"""What git opens when neither `$VISUAL` nor `$EDITOR` is set."""


def editor_command(workspace: Path, environ: Mapping[str, str] = os.environ) -> list[str]:
    """`$VISUAL`, else `$EDITOR` (either may carry arguments: `code --wait`), else `vi`, on `model_new.py` and
    every file under `kernels/`, the files whose saves are evaluated; by paths relative to `workspace`, where it
    runs."""
    editor = shlex.split(environ.get("VISUAL") or environ.get("EDITOR") or FALLBACK_EDITOR)
    kernels = sorted(path.relative_to(workspace) for path in (workspace / KERNELS_DIR).rglob("*") if path.is_file())
    return [*editor, MODEL_FILE, *map(str, kernels)]
