"""The agent's tools, in one registry (`TOOLS`): each is its spec (what the model is shown) and its function
(what the call does, on a `ToolHost`); the loop dispatches a call with `call_tool`. File tools are confined to
the workspace: no absolute paths, no `..` out of it, no symlinks that lead out, no writes to the task copy or
`.git`. `evaluate`, `shell` and `done` act through the host (the controller), which owns candidates,
permissions and the end of the session.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

READ_LIMIT = 100_000
GREP_LIMIT = 200


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": {"type": "object", "properties": self.parameters, "required": list(self.required)}}}


class ToolError(Exception):
    """A tool call that cannot be carried out; its message goes back to the model.

    `invalid_call`: the model's call itself was wrong (an unknown tool, arguments that do not fit it, a path or edit
    the tool refuses), which finetuning's rejection sampling filters on; False when a sound call was stopped by
    something else (the user's shell policy, a harness that could not evaluate).
    """

    def __init__(self, message: str, *, invalid_call: bool = True) -> None:
        super().__init__(message)
        self.invalid_call = invalid_call


class FileTools:
    """read / write / edit / list / grep, confined to `root`; `protected` files are read-only."""

    def __init__(self, root: Path, protected: tuple[str, ...]) -> None:
        self.root = root.resolve()
        self.protected = {self.root / name for name in protected}

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string relative to the workspace")
        if Path(path).is_absolute():
            raise ToolError(f"{path}: absolute paths are not allowed; use a path relative to the workspace")
        target = (self.root / path).resolve()
        if target != self.root and self.root not in target.parents:
            raise ToolError(f"{path}: outside the workspace")
        if for_write and (target in self.protected or ".git" in target.relative_to(self.root).parts):
            raise ToolError(f"{path}: read-only (the task copy and .git cannot be changed)")
        return target

    def read(self, path: str) -> str:
        target = self.resolve(path)
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        text = target.read_text(errors="replace")
        return text if len(text) <= READ_LIMIT else text[:READ_LIMIT] + f"\n… ({len(text) - READ_LIMIT} more chars)"

    def write(self, path: str, content: str) -> str:
        target = self.resolve(path, for_write=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return f"wrote {path} ({content.count(chr(10)) + 1} lines)"

    def edit(self, path: str, old: str, new: str) -> str:
        target = self.resolve(path, for_write=True)
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        text = target.read_text()
        count = text.count(old) if old else 0
        if count != 1:
            raise ToolError(f"{path}: `old` occurs {count} times; it must match exactly once "
                            "(include more surrounding lines)")
        target.write_text(text.replace(old, new, 1))
        return f"edited {path}"

    def list(self, path: str = ".") -> str:
        base = self.resolve(path)
        if base.is_file():
            return path
        files = sorted(p.relative_to(self.root).as_posix() for p in base.rglob("*")
                       if p.is_file() and not self._hidden(p))
        return "\n".join(files) or "(empty)"

    def grep(self, pattern: str, path: str = ".") -> str:
        try:
            regex = re.compile(pattern)
        except re.error as error:
            raise ToolError(f"bad regular expression: {error}") from None
        base = self.resolve(path)
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file() and not self._hidden(p))
        hits = [f"{p.relative_to(self.root).as_posix()}:{number}: {line}"
                for p in files for number, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
                if regex.search(line)]
        more = f"\n… {len(hits) - GREP_LIMIT} more" if len(hits) > GREP_LIMIT else ""
        return "\n".join(hits[:GREP_LIMIT]) + more if hits else "no matches"

    def _hidden(self, path: Path) -> bool:
        parts = path.relative_to(self.root).parts
        return ".git" in parts or "__pycache__" in parts


def parse_arguments(raw: str | dict | None) -> dict[str, Any]:
    """Tool-call arguments as a dict (providers send a JSON string)."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as error:
        raise ToolError(f"arguments are not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise ToolError("arguments must be a JSON object")
    return value


class ToolHost(Protocol):
    """What the tools act on: the controller, which owns the workspace's files, the session's candidates, the
    user's permissions and the end of the loop."""

    files: FileTools

    def evaluate(self) -> str: ...
    def run_shell(self, command: str) -> tuple[str, bool]: ...
    def finish(self) -> str: ...


@dataclass(frozen=True)
class Tool:
    """A tool as the model sees it (`spec`) and what it does: `run(host, **arguments)` gives (output, ok)."""

    spec: ToolSpec
    run: Callable[..., tuple[str, bool]]


@dataclass(frozen=True)
class ToolOutcome:
    output: str
    ok: bool
    invalid_call: bool = False
    """The model's call itself was wrong (`ToolError.invalid_call`)."""


TOOLS: dict[str, Tool] = {}
"""Every tool, by name, in the order the model is shown them: a tool is added by defining it here, with `@tool`."""


def tool(spec: ToolSpec) -> Callable[[Callable[..., tuple[str, bool]]], Callable[..., tuple[str, bool]]]:
    def register(run: Callable[..., tuple[str, bool]]) -> Callable[..., tuple[str, bool]]:
        TOOLS[spec.name] = Tool(spec, run)
        return run

    return register


@contextmanager
def _file_errors(name: str) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        raise ToolError(f"{name}: {error.strerror or error}") from None


_PATH = {"type": "string", "description": "path relative to the workspace"}


@tool(ToolSpec("read", "Read a workspace file.", {"path": _PATH}, ("path",)))
def _read(host: ToolHost, path: str) -> tuple[str, bool]:
    with _file_errors("read"):
        return host.files.read(path), True


@tool(ToolSpec("write", "Create or overwrite a workspace file (folders are created).",
               {"path": _PATH, "content": {"type": "string"}}, ("path", "content")))
def _write(host: ToolHost, path: str, content: str) -> tuple[str, bool]:
    with _file_errors("write"):
        return host.files.write(path, content), True


@tool(ToolSpec("edit", "Replace the one exact occurrence of `old` in a file by `new`.",
               {"path": _PATH, "old": {"type": "string"}, "new": {"type": "string"}}, ("path", "old", "new")))
def _edit(host: ToolHost, path: str, old: str, new: str) -> tuple[str, bool]:
    with _file_errors("edit"):
        return host.files.edit(path, old, new), True


@tool(ToolSpec("list", "List the files under a workspace folder (default: the whole workspace).", {"path": _PATH}))
def _list(host: ToolHost, path: str = ".") -> tuple[str, bool]:
    with _file_errors("list"):
        return host.files.list(path), True


@tool(ToolSpec("grep", "Search workspace files for a regular expression; prints file:line: text.",
               {"pattern": {"type": "string"}, "path": _PATH}, ("pattern",)))
def _grep(host: ToolHost, pattern: str, path: str = ".") -> tuple[str, bool]:
    with _file_errors("grep"):
        return host.files.grep(pattern, path), True


@tool(ToolSpec("evaluate", "Build, verify, guard and time the current model_new.py + kernels/ against the task "
               "(the harness); the workspace is committed as a new candidate."))
def _evaluate(host: ToolHost, **_ignored: Any) -> tuple[str, bool]:
    return host.evaluate(), True


@tool(ToolSpec("shell", "Run a shell command in the workspace (subject to the user's permission policy).",
               {"command": {"type": "string"}}, ("command",)))
def _shell(host: ToolHost, command: str) -> tuple[str, bool]:
    return host.run_shell(str(command))


@tool(ToolSpec("done", "End the session: the best correct candidate so far is the result.",
               {"summary": {"type": "string", "description": "what you achieved"}}))
def _done(host: ToolHost, **_ignored: Any) -> tuple[str, bool]:
    return host.finish(), True


TOOL_SPECS = tuple(t.spec for t in TOOLS.values())


def call_tool(host: ToolHost, name: str, arguments: dict[str, Any]) -> ToolOutcome:
    """Run the tool `name` on `host`: a call that names no tool, or whose arguments do not fit the tool, and any
    `ToolError` come back as the outcome, for the model to read."""
    try:
        found = TOOLS.get(name)
        if found is None:
            raise ToolError(f"unknown tool '{name}' (have: {', '.join(TOOLS)})")
        try:
            bound = inspect.signature(found.run).bind(host, **arguments)
        except TypeError as error:
            raise ToolError(f"{name}: bad arguments ({error})") from None
        output, ok = found.run(*bound.args, **bound.kwargs)
    except ToolError as error:
        return ToolOutcome(str(error), False, error.invalid_call)
    return ToolOutcome(output, ok)
