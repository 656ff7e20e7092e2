"""Session logs read as finetuning data: each log becomes a `finetune.trajectory.Trajectory`.

    logs = find_session_logs([Path("examples/sessions")])      # session dirs, sessions roots or log files
    trajectories, skipped = read_trajectories(logs)           # skipped: one line per unusable log
    trajectory = read_trajectory(logs[0])                     # raises SessionError for an unusable log

An evaluation belongs to the latest LLM turn before it (the turn whose `evaluate` call ran it; a resumed session
re-runs an interrupted evaluation after its turn too). Manual-mode evaluations, before any turn, count towards
the session's reward only.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kernelpilot.errors import SessionError, UsageError
from kernelpilot.finetune.trajectory import ModelTurn, Trajectory
from kernelpilot.session.contexts import TurnContexts
from kernelpilot.session.events import Evaluation, LLMTurn, SessionStarted, ToolResult
from kernelpilot.session.log import read_events
from kernelpilot.session.store import LOG_NAME

NOT_CALL_ERRORS = ("shell", "evaluate")
"""Tools whose failures, in logs that predate `ToolResult.invalid_call`, are outcomes (an exit status, a denied
command, a harness that could not evaluate) rather than invalid calls."""


CHAT_ROLES = ("system", "user", "assistant", "tool")


def find_session_logs(paths: Iterable[Path]) -> list[Path]:
    """The session logs named by `paths`: log files, session directories, or folders holding sessions at any depth
    (a sessions root, `examples/sessions`). Raises `UsageError` for a path that holds none."""
    logs: list[Path] = []
    for path in map(Path, paths):
        if path.is_file():
            found = [path]
        elif path.is_dir():
            found = sorted(path.rglob(LOG_NAME))
        else:
            raise UsageError(f"{path}: no such file or directory")
        if not found:
            raise UsageError(f"{path}: no session logs ({LOG_NAME}) in it")
        logs.extend(log for log in found if log not in logs)
    return logs


def read_trajectory(log_path: Path) -> Trajectory:
    """One session log as a trajectory; `SessionError` (one line naming the log) when it cannot be used: corrupt,
    torn at its end, or without its `session_started` line."""
    events = read_events(log_path, whole=True)
    started = next((e for e in events if isinstance(e, SessionStarted)), None)
    if started is None:
        raise SessionError(f"{log_path}: no session_started event")
    contexts = TurnContexts()
    turns: list[tuple[LLMTurn, list]] = []
    rewards: list[list[int]] = []
    all_rewards: list[int] = []
    tool_errors = 0
    for event in events:
        if isinstance(event, LLMTurn):
            _check_tokens(log_path, event)
            try:
                context = contexts.context_of(event)
                _check_messages(event.turn, [*context, event.response])
            except SessionError as error:
                raise SessionError(f"{log_path}: {error}") from None
            turns.append((event, context))
            rewards.append([])
        elif isinstance(event, Evaluation):
            all_rewards.append(event.result.reward)
            if rewards:
                rewards[-1].append(event.result.reward)
        elif isinstance(event, ToolResult):
            tool_errors += _invalid_call(event)
    model_turns = tuple(
        ModelTurn(turn=turn.turn, context=context, response=turn.response, token_ids=turn.token_ids,
                  logprobs=turn.logprobs, sampling=turn.sampling or dict(started.sampling),
                  model=turn.model or started.model, rewards=tuple(earned))
        for (turn, context), earned in zip(turns, rewards))
    return Trajectory(session_id=started.session_id, log_path=log_path, model=started.model, turns=model_turns,
                      reward=max(all_rewards, default=None), tool_errors=tool_errors)


def read_trajectories(paths: Iterable[Path]) -> tuple[list[Trajectory], list[str]]:
    """The trajectories of every log under `paths` (see `find_session_logs`), and one line per log skipped
    because it cannot be used, saying which and why (each `SessionError` names its log first)."""
    trajectories, skipped = [], []
    for log in find_session_logs(paths):
        try:
            trajectories.append(read_trajectory(log))
        except SessionError as error:
            skipped.append(f"skipped {error}")
    return trajectories, skipped


def _invalid_call(result: ToolResult) -> bool:
    if result.invalid_call is not None:
        return result.invalid_call
    return not result.ok and result.name not in NOT_CALL_ERRORS


def _check_messages(turn: int, messages: list) -> None:
    """Messages in the chat format the trainer's template and the text protocol read (a log is data from disk:
    a malformed one is skipped with its reason, not met later as a KeyError)."""
    for number, message in enumerate(messages, 1):
        problem = _message_problem(message)
        if problem:
            raise SessionError(f"turn {turn}, message {number}: {problem}")


def _message_problem(message: object) -> str | None:
    if not isinstance(message, dict):
        return f"not a JSON object but {type(message).__name__}"
    role = message.get("role", "assistant")  # a response's role is implied
    if role not in CHAT_ROLES:
        return f"unknown role {role!r}"
    if not isinstance(message.get("content") or "", str):
        return "content is not text"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "a tool result without its tool_call_id"
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(function, dict) and isinstance(function.get("name"), str)):
            return "a tool call without a function name"
    return None


def _check_tokens(log_path: Path, turn: LLMTurn) -> None:
    if turn.token_ids is not None and turn.logprobs is not None and len(turn.token_ids) != len(turn.logprobs):
        raise SessionError(f"{log_path}: turn {turn.turn} has {len(turn.token_ids)} token ids but "
                           f"{len(turn.logprobs)} logprobs")
