"""Accept, reject and undo: the only way a candidate reaches the user's project.

A candidate is a set of workspace files (`model_new.py`, `kernels/*`). Accepting writes them next
to the task file, as the workspace form (`<stem>_kernelpilot/model_new.py` + `kernels/`) or as one
KernelBench-style file (`<stem>_new.py`, kernels and their loader embedded) — either runs with torch alone —
and commits them on the branch `kernelpilot/<session id>` when the project is a git repository —
without checking that branch out: the user's HEAD, checked-out branch and staged work never move.
Accepting chosen hunks applies only those hunks of the diff between the accepted state and the
candidate; what that makes was never evaluated, and its commit says so. Undo restores exactly what the last accept overwrote (with a commit
of its own: history is never rewritten).
"""

from __future__ import annotations

import ast
import difflib
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import git

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult, format_speedup
from kernelpilot.harness import standalone_kernels
from kernelpilot.session.workspace import MODEL_FILE

FORMS = ("workspace", "single")
CONTEXT_LINES = 3
STAND_IN_IDENTITY = {"GIT_AUTHOR_NAME": "kernelpilot", "GIT_AUTHOR_EMAIL": "kernelpilot@localhost",
                     "GIT_COMMITTER_NAME": "kernelpilot", "GIT_COMMITTER_EMAIL": "kernelpilot@localhost"}
"""Who signs an accept's commit where git knows no user (no `user.email`, no host name to make one from)."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of a unified diff between two file sets, addressable by `id` for partial accepts."""

    path: str
    number: int
    header: str
    lines: tuple[str, ...]
    """Unified-diff body lines, each starting with ' ', '-' or '+'."""

    @property
    def id(self) -> str:
        return f"{self.path}#{self.number}"


def _lines(text: str | None) -> list[str]:
    return (text or "").splitlines(keepends=True)


def _matcher(old: str | None, new: str | None) -> difflib.SequenceMatcher:
    return difflib.SequenceMatcher(None, _lines(old), _lines(new), autojunk=False)


def hunks(old: dict[str, str], new: dict[str, str]) -> list[Hunk]:
    """Hunks of every changed file, files in path order (a missing file diffs as empty)."""
    found = []
    for path in sorted(old.keys() | new.keys()):
        if old.get(path) == new.get(path):
            continue
        matcher = _matcher(old.get(path), new.get(path))
        a, b = matcher.a, matcher.b
        for number, group in enumerate(matcher.get_grouped_opcodes(CONTEXT_LINES)):
            (_, i1, _, j1, _), (_, _, i2, _, j2) = group[0], group[-1]
            header = f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"
            body = []
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    body += [" " + line for line in a[a1:a2]]
                    continue
                body += ["-" + line for line in a[a1:a2]]
                body += ["+" + line for line in b[b1:b2]]
            found.append(Hunk(path, number, header, tuple(line.rstrip("\n") for line in body)))
    return found


def apply_hunks(old: dict[str, str], new: dict[str, str], chosen: Iterable[str]) -> dict[str, str]:
    """`old` with only the chosen hunks (by `Hunk.id`) of the diff to `new` applied."""
    chosen = set(chosen)
    result = dict(old)
    for path in sorted(old.keys() | new.keys()):
        if old.get(path) == new.get(path):
            continue
        matcher = _matcher(old.get(path), new.get(path))
        # get_grouped_opcodes trims the first and last "equal" runs of the list get_opcodes caches, in place:
        # the whole file's opcodes are taken before it runs, or the lines beyond a hunk's context are lost
        opcodes = list(matcher.get_opcodes())
        picked = {
            (tag, i1, i2, j1, j2)
            for number, group in enumerate(matcher.get_grouped_opcodes(CONTEXT_LINES))
            if f"{path}#{number}" in chosen
            for tag, i1, i2, j1, j2 in group
            if tag != "equal"
        }
        if not picked:
            continue
        merged = []
        for opcode in opcodes:
            _, i1, i2, j1, j2 = opcode
            merged += matcher.b[j1:j2] if opcode in picked else matcher.a[i1:i2]
        if path not in old and not merged:
            continue
        if path in old and path not in new and not merged:
            result.pop(path, None)
            continue
        result[path] = "".join(merged)
    return result


_LOAD_KERNELS = re.compile(r"^(\s*\w+\s*=\s*)load_kernels\(.*\)\s*$", re.MULTILINE)
_IMPORT = re.compile(r"^from kernelpilot\.harness\.kernels import load_kernels[ \t]*$", re.MULTILINE)
_OTHER_IMPORT = re.compile(r"^\s*(from|import)\s+kernelpilot\b", re.MULTILINE)


def _standalone_loader() -> str:
    """`standalone_kernels`' code below its docstring: what a single file carries instead of importing kernelpilot."""
    text = Path(standalone_kernels.__file__).read_text()
    docstring_end = ast.parse(text).body[0].end_lineno
    return "".join(text.splitlines(keepends=True)[docstring_end:]).strip("\n")


def _embed_loader(model: str, name: str, definitions: str = "", data: str = "") -> str:
    """`model` with its import of kernelpilot's loader replaced by `standalone_kernels`' code (then `definitions`
    and `data`); where kernelpilot is installed its own `name` is taken instead, so that `kernelpilot eval` sees
    each launch (a kernel that never ran costs the reward)."""
    embedded = (f"# kernelpilot's kernel loader, embedded: this file needs torch alone\n{_standalone_loader()}\n\n"
                f"{definitions}try:\n    from kernelpilot.harness.kernels import {name}\nexcept ImportError:\n"
                f"    pass{data}")
    return _IMPORT.sub(lambda _: embedded, model, count=1)


def single_file(files: dict[str, str]) -> str:
    """The workspace as one KernelBench-style file that runs with torch alone: kernel sources embedded, with
    the loader of `standalone_kernels` in place of the import of kernelpilot's."""
    model = files.get(MODEL_FILE)
    if model is None:
        raise SessionError("the candidate has no model_new.py")
    if _OTHER_IMPORT.search(_IMPORT.sub("", model)):
        raise SessionError("model_new.py imports more of kernelpilot than load_kernels: "
                           "export it in the workspace form")
    kernels = {Path(path).name: code for path, code in sorted(files.items()) if path.startswith("kernels/")}
    if not kernels:
        return model
    if not (_LOAD_KERNELS.search(model) and _IMPORT.search(model)):
        raise SessionError("model_new.py does not call load_kernels(...) as documented: "
                           "export it in the workspace form")
    sources = "SOURCES = {\n" + "".join(f"    {name!r}: {code!r},\n" for name, code in kernels.items()) + "}"
    model = _embed_loader(model, "load_kernel_sources", data=f"\n\n\n{sources}")
    return _LOAD_KERNELS.sub(lambda m: m.group(1) + "load_kernel_sources(SOURCES)", model, count=1)


_LOAD_FOLDER = '''def load_kernels(kernels_dir):
    """The launchers of the kernel sources in `kernels_dir`."""
    return load_kernel_sources({p.name: p.read_text() for p in sorted(Path(kernels_dir).iterdir()) if p.is_file()})


'''


def standalone_workspace(files: dict[str, str]) -> dict[str, str]:
    """The workspace form that runs with torch alone: `model_new.py` loads `kernels/` with the embedded loader in
    place of kernelpilot's import. A model that needs more of kernelpilot than its loader is kept as it is."""
    model = files.get(MODEL_FILE)
    if model is None or not _IMPORT.search(model) or _OTHER_IMPORT.search(_IMPORT.sub("", model)):
        return dict(files)
    return dict(files, **{MODEL_FILE: _embed_loader(model, "load_kernels", definitions=_LOAD_FOLDER)})


def destinations(task_path: Path, files: dict[str, str], form: str) -> dict[Path, str]:
    """Where each accepted file goes in the user's project, next to the task file."""
    if form == "single":
        return {task_path.with_name(f"{task_path.stem}_new.py"): single_file(files)}
    if form == "workspace":
        root = task_path.with_name(f"{task_path.stem}_kernelpilot")
        return {root / path: code for path, code in standalone_workspace(files).items()}
    raise SessionError(f"unknown accept form '{form}' (use {' or '.join(FORMS)})")


def evaluation_summary(result: EvalResult) -> str:
    """The evaluation as commit-message lines: verdict, errors, times, speedups, where it ran."""
    times = result.times_ms
    lines = [
        f"status: {result.status}, reward {result.reward}",
        f"max abs err {result.max_abs_err}, max rel err {result.max_rel_err}",
        "times (ms): " + ", ".join(f"{k} {v:.4g}" for k, v in times.items() if v is not None),
        f"speedup vs eager {format_speedup(result.speedup_vs_eager)}, vs torch.compile {format_speedup(result.speedup_vs_compile)}",
        f"device: {result.device}",
    ]
    lines += [f"violation {v.check}: {v.detail}" for v in result.violations]
    return "\n".join(lines)


@dataclass(frozen=True)
class Acceptance:
    """What one accept did, enough to undo it."""

    candidate_id: int | None
    files: dict[str, str]
    """The accepted state afterwards, as workspace files."""
    previous: dict[Path, str | None]
    """Each path this accept touched, with its content before (None: it did not exist)."""
    commit: str | None = None
    branch: str | None = None
    hunks: tuple[str, ...] = ()
    evaluated: bool = True
    """False when the accepted state is not the candidate the harness judged (some of its hunks only)."""


@dataclass
class Project:
    """The user's project around the task file: writes accepts there and takes them back."""

    task_path: Path
    session_id: str
    history: list[Acceptance] = field(default_factory=list)

    @property
    def accepted_files(self) -> dict[str, str]:
        return dict(self.history[-1].files) if self.history else {}

    @property
    def branch(self) -> str:
        return f"kernelpilot/{self.session_id}"

    def accept(self, candidate_id: int | None, files: dict[str, str], result: EvalResult | None,
               form: str = "workspace", chosen_hunks: Iterable[str] | None = None) -> Acceptance:
        """Write `files` (or only the chosen hunks of them) into the project, and commit them when under git."""
        chosen = tuple(chosen_hunks or ())
        accepted = apply_hunks(self.accepted_files, files, chosen) if chosen else dict(files)
        evaluated = accepted == files
        if form == "single" and "model_new.py" in files and "model_new.py" not in accepted:
            raise SessionError("the chosen hunks leave out model_new.py, which the single file is made of: "
                               "choose its hunks too, or accept in the workspace form")
        targets = destinations(self.task_path, accepted, form)
        stale = {p for done in self.history[-1:] for p in done.previous if p not in targets}
        previous = {path: _read(path) for path in sorted(targets.keys() | stale)}
        for path in stale:
            self._remove(path)
        for path, code in targets.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)
        scope = "candidate" if evaluated else "chosen hunks of candidate"
        message = f"kernelpilot: accept {scope} {candidate_id} for {self.task_path.name}"
        if not evaluated:
            message += f"\n\nstatus: not evaluated (hunks {', '.join(chosen)} only)"
        elif result is not None:
            message += "\n\n" + evaluation_summary(result)
        repo = self._repo()
        try:
            commit = _commit_on_branch(repo, self.branch, list(previous), message) if repo is not None else None
        except git.GitCommandError as error:
            self._restore(previous)
            raise SessionError(f"accept not committed on {self.branch}, so nothing was written: "
                               f"{_git_reason(error)}") from None
        acceptance = Acceptance(candidate_id, accepted, previous, commit, self.branch if repo else None, chosen,
                                evaluated)
        self.history.append(acceptance)
        return acceptance

    def undo(self) -> Acceptance:
        """Put back what the last accept overwrote; the accepted state returns to the one before."""
        if not self.history:
            raise SessionError("nothing to undo")
        last = self.history.pop()
        self._restore(last.previous)
        repo = self._repo()
        if repo is not None:
            _commit_on_branch(repo, self.branch, list(last.previous),
                              f"kernelpilot: undo accept of candidate {last.candidate_id}")
        return last

    def _restore(self, previous: dict[Path, str | None]) -> None:
        for path, code in previous.items():
            if code is None:
                self._remove(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(code)

    def _remove(self, path: Path) -> None:
        """Delete a file an accept wrote, and the folders that held only it (never the task's own folder)."""
        path.unlink(missing_ok=True)
        for folder in path.parents:
            if folder == self.task_path.parent or any(folder.iterdir()):
                break
            folder.rmdir()

    def _repo(self):
        try:
            return git.Repo(self.task_path.parent, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def _git_reason(error: git.GitCommandError) -> str:
    """git's own reason (its `fatal:` / `error:` line), not GitPython's account of the command."""
    lines = [line.strip(" '").removeprefix("stderr: '") for line in str(error.stderr).splitlines() if line.strip(" '")]
    return next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else "")


def _identity(repo) -> dict[str, str]:
    """The user's own identity where git has one; else kernelpilot's (as in its workspaces): an accept should not
    fail where git was never told who commits."""
    known = all(repo.git.var(name, with_exceptions=False) for name in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"))
    return {} if known else STAND_IN_IDENTITY


def _commit_on_branch(repo, branch: str, paths: list[Path], message: str) -> str | None:
    """Commit exactly `paths`, as the working tree holds them (absent: deleted), on `branch`, which starts at
    HEAD. The tree is built in an index of its own and the branch moved with `update-ref`, so HEAD, the
    checked-out branch and the user's index stay as they were (unless `branch` is the one checked out:
    then the user's index takes the same paths, or `git status` would show the commit undone)."""
    root = Path(repo.working_tree_dir).resolve()
    relative = [str(path.resolve().relative_to(root)) for path in paths]
    ref = f"refs/heads/{branch}"
    tip = repo.git.rev_parse("--verify", "--quiet", ref, with_exceptions=False) or None
    parent = tip or (repo.head.commit.hexsha if repo.head.is_valid() else None)
    with tempfile.TemporaryDirectory() as scratch, repo.git.custom_environment(GIT_INDEX_FILE=f"{scratch}/index"):
        if parent:
            repo.git.read_tree(parent)
        repo.git.update_index("--add", "--remove", "--", *relative)
        tree = repo.git.write_tree()
    if parent and repo.commit(parent).tree.hexsha == tree:
        return None
    with repo.git.custom_environment(**_identity(repo)):
        commit = repo.git.commit_tree(tree, *(("-p", parent) if parent else ()), "-m", message)
    repo.git.update_ref("-m", message.splitlines()[0], ref, commit, tip or "")
    if not repo.head.is_detached and repo.head.is_valid() and repo.active_branch.name == branch:
        repo.git.update_index("--add", "--remove", "--", *relative)
    return commit
