"""Manual mode: a person edits `kernels/` and `model_new.py` in their own editor; each save is evaluated.

watchdog's observer reports file events; saves are debounced (editors write a file in several
steps, and a save of many files should be one candidate).
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from kernelpilot.session.workspace import is_candidate_path

DEBOUNCE_S = 0.5


class SaveWatcher(FileSystemEventHandler):
    """Remembers when a candidate file last changed under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._changed_at: float | None = None
        self._lock = threading.Lock()
        self._observer = Observer()
        self._observer.schedule(self, str(self.root), recursive=True)

    def __enter__(self) -> SaveWatcher:
        self._observer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._observer.stop()
        self._observer.join()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        if any(p and self._relevant(Path(p)) for p in paths):
            with self._lock:
                self._changed_at = time.monotonic()

    def _relevant(self, path: Path) -> bool:
        try:
            relative = path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return False
        return is_candidate_path(relative) and "__pycache__" not in relative

    def take_settled_save(self) -> bool:
        """True once per burst of saves, after it has been quiet for `DEBOUNCE_S`."""
        with self._lock:
            if self._changed_at is None or time.monotonic() - self._changed_at < DEBOUNCE_S:
                return False
            self._changed_at = None
            return True


def starter_model(task_source: str) -> str:
    """The task as a `ModelNew` to start from: replace its torch ops with calls into your kernels."""
    header = ('"""Your candidate: replace the torch ops in forward with your kernels, e.g.\n\n'
              "    from pathlib import Path\n    from kernelpilot.harness.kernels import load_kernels\n"
              '    ops = load_kernels(Path(__file__).parent / "kernels")\n\nSaving this file or kernels/* '
              'evaluates the candidate."""\n\n')
    return header + re.sub(r"\bclass Model\b", "class ModelNew", task_source, count=1)
