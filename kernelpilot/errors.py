"""Errors a user can cause. Each carries one line for the user; the CLI turns them into exit 2."""


class KernelpilotError(Exception):
    """Base class: a problem with the user's input, never a bug in kernelpilot."""


class UsageError(KernelpilotError):
    """Unusable command-line arguments or configuration."""


class TaskError(KernelpilotError):
    """A task file that cannot be used: missing names, import errors, degenerate or non-deterministic outputs."""


class CandidateError(KernelpilotError):
    """A candidate path that is not a candidate at all (neither a ModelNew file nor a workspace)."""


class SessionError(KernelpilotError):
    """A session that cannot be found, resumed or exported."""


def one_line(error: BaseException) -> str:
    """An exception as one line of at most 2000 characters: its type and its message."""
    text = f"{type(error).__name__}: {error}".strip()
    return " ".join(text.split())[:2000]
