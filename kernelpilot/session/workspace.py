"""The agent's workspace: a git repository holding the read-only task copy, `model_new.py` and `kernels/`.

Every evaluated candidate is a commit; its `EvalResult` JSON is attached as a git note, so
`git log --show-notes` in the workspace reads as the session's history. Candidates are evaluated
from their commit (exported to a scratch folder), so what was judged is exactly what was committed.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import git

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult
from kernelpilot.harness.task_files import sha256_file

TASK_FILE = "task.py"
MODEL_FILE = "model_new.py"
KERNELS_DIR = "kernels"
CANDIDATE_PATHS = (MODEL_FILE, KERNELS_DIR)
IGNORED = "__pycache__/\n*.pyc\n*.so\n*.o\n"


def is_candidate_path(path: str) -> bool:
    """`model_new.py` and files under `kernels/`: what a candidate consists of."""
    return path == MODEL_FILE or path.startswith(KERNELS_DIR + "/")


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        # Held while reading git objects: GitPython reads them through one persistent `git cat-file` per
        # repository, and two threads asking at once (the app loading a candidate while the agent's evaluation
        # exports one) get each other's answers ("Odd-length string", "Invalid tree entry mode").
        self._objects = threading.Lock()
        try:
            self.repo = git.Repo(root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise SessionError(f"{root} is not a kernelpilot workspace (no git repository)") from None

    @classmethod
    def create(cls, root: Path, task_path: Path, starter: dict[str, str]) -> Workspace:
        """A fresh workspace: the task copied read-only, `starter` files, one initial commit."""
        root.mkdir(parents=True)
        repo = git.Repo.init(root)
        with repo.config_writer() as config:
            config.set_value("user", "name", "kernelpilot")
            config.set_value("user", "email", "kernelpilot@localhost")
            config.set_value("commit", "gpgsign", "false")
        (root / ".gitignore").write_text(IGNORED)
        (root / KERNELS_DIR).mkdir()
        task_copy = root / TASK_FILE
        shutil.copyfile(task_path, task_copy)
        task_copy.chmod(0o444)
        for path, code in starter.items():
            (root / path).write_text(code)
        repo.git.add("-A")
        repo.git.commit("-m", f"initial workspace for {task_path.name}")
        return cls(root)

    @property
    def task_copy(self) -> Path:
        return self.root / TASK_FILE

    def task_intact(self, sha256: str) -> bool:
        return self.task_copy.is_file() and sha256_file(self.task_copy) == sha256

    @property
    def initial_commit(self) -> str:
        return self.repo.git.rev_list("--max-parents=0", "HEAD").split()[0]

    def snapshot(self, message: str) -> str:
        """Commit the workspace as it is now (even unchanged: each evaluation is its own candidate)."""
        self.repo.git.add("-A")
        self.repo.git.commit("--allow-empty", "-m", message)
        return self.head_sha()

    def attach_result(self, commit: str, result: EvalResult) -> None:
        self.repo.git.notes("add", "-f", "-m", json.dumps(result.to_json(), indent=1, default=str), commit)

    def head_sha(self) -> str:
        with self._objects:
            return self.repo.head.commit.hexsha

    def head_message(self) -> str:
        with self._objects:
            return self.repo.head.commit.message

    def files_at(self, commit: str) -> dict[str, str]:
        """`model_new.py` and `kernels/*` at `commit`, by workspace-relative path."""
        with self._objects:
            try:
                tree = self.repo.commit(commit).tree
            except (ValueError, git.BadName) as error:
                raise SessionError(f"no commit {commit} in {self.root}") from error
            return {blob.path: blob.data_stream.read().decode("utf-8", errors="replace")
                    for blob in tree.traverse() if blob.type == "blob" and is_candidate_path(blob.path)}

    def diff(self, old_commit: str | None, new_commit: str) -> str:
        """Unified diff of the candidate files between two commits (None: the initial workspace)."""
        return self.repo.git.diff(old_commit or self.initial_commit, new_commit, "--", *CANDIDATE_PATHS)

    def export(self, commit: str, destination: Path) -> None:
        """Write the candidate files of `commit` under `destination` (the workspace form)."""
        for path, code in self.files_at(commit).items():
            target = destination / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(code)
        (destination / KERNELS_DIR).mkdir(parents=True, exist_ok=True)
