"""Export a session's candidate: as one KernelBench-style file (kernel sources and their loader embedded,
`accept.single_file`) or as a workspace folder (`model_new.py` + `kernels/`, the loader embedded in `model_new.py`,
`accept.standalone_workspace`); either runs with torch alone."""

from __future__ import annotations

from pathlib import Path

from kernelpilot.errors import SessionError
from kernelpilot.paths import check_kind
from kernelpilot.session.accept import single_file, standalone_workspace
from kernelpilot.session.session import Session
from kernelpilot.session.workspace import KERNELS_DIR


def default_destination(session: Session, form: str) -> Path:
    stem = Path(session.started.task_path).stem
    return Path(f"{stem}_{session.session_id}_new.py" if form == "single" else f"{stem}_{session.session_id}")


def export_candidate(session: Session, out: Path | None, form: str = "single",
                     candidate_id: int | None = None) -> Path:
    """Write a candidate (default: the session's best) to `out` (default: beside the cwd, named after task and session)."""
    if candidate_id is None:
        candidate = session.best()
        if candidate is None:
            raise SessionError(f"session {session.session_id} has no correct candidate to export")
    else:
        candidate = session.candidate(candidate_id)
    files = session.files_at(candidate.commit)
    destination = out or default_destination(session, form)
    check_kind(destination, folder=form == "workspace", flag="--out" if out else "export to")
    if form == "single":
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(single_file(files))
    elif form == "workspace":
        for path, code in standalone_workspace(files).items():
            target = destination / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code)
        (destination / KERNELS_DIR).mkdir(parents=True, exist_ok=True)
    else:
        raise SessionError(f"unknown export format '{form}' (use single or workspace)")
    return destination
