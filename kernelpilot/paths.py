"""Paths a user names for kernelpilot to write or read, checked before any work: a file where a folder must go
(or the reverse) costs one line, not a run that crashes when it saves."""

from __future__ import annotations

from pathlib import Path

from kernelpilot.errors import UsageError


def check_kind(path: Path, *, folder: bool, flag: str) -> None:
    """Raise UsageError, naming `flag`, unless `path` is (or can become) a folder when `folder`, else a file:
    what is already there is of that kind, and nothing above it is a file."""
    nearest = next(p for p in (path, *path.parents) if p.exists())
    if nearest == path and path.is_dir() != folder:
        raise UsageError(f"{flag} {path}: is a {'file, not a folder' if folder else 'folder, not a file'}")
    if nearest != path and not nearest.is_dir():
        raise UsageError(f"{flag} {path}: {nearest} is a file, not a folder")
