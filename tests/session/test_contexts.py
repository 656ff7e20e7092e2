"""The log stores each message once: a turn's line does not grow with the session, every reader rebuilds the same
full contexts, and logs written when every turn repeated its whole context still read and resume."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise
from pathlib import Path

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.session.contexts import TurnContexts
from kernelpilot.session.events import LLMTurn
from kernelpilot.session.log import SessionLog, read_events
from kernelpilot.session.store import LOG_NAME, WORKSPACE_NAME
from kernelpilot.session.trajectory import read_trajectory
from kernelpilot.session.workspace import Workspace

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "examples" / "relu_bias" / "model.py"
OLD_FORMAT = Path(__file__).parent / "data" / "old_format"
TURNS = 12


def test_a_turn_stores_only_what_is_new_so_the_log_grows_linearly(tmp_path):
    transcript = tmp_path / "transcript.json"
    transcript.write_text(json.dumps({"messages": [
        *[{"content": "Looking again.", "tool_calls": [{"name": "read", "arguments": {"path": "task.py"}}]}] * TURNS,
        {"content": "", "tool_calls": [{"name": "done", "arguments": {}}]}]}))
    controller = SessionController(SessionSettings(task_path=TASK, model=f"replay:{transcript}", device="cpu",
                                                   sessions_root=tmp_path / "sessions"), lambda event: None)
    assert controller.run().reason == "done"
    lines = [line for line in controller.session.log_path.read_text().splitlines() if '"kind": "llm_turn"' in line]
    sizes = [len(line.encode()) for line in lines[1:TURNS]]  # the same read, turn after turn (then done)
    assert len(sizes) == TURNS - 1 and max(sizes) - min(sizes) < 16, f"turn k's line grows with k: {sizes}"
    assert len(lines[0]) > max(sizes), "the first turn stores the opening (system prompt and task)"

    contexts = [turn.context for turn in read_trajectory(controller.session.log_path).turns]
    for previous, context in pairwise(contexts):
        assert len(context) == len(previous) + 2, "the previous response and its tool result"
    assert contexts[-1][2]["tool_calls"][0]["function"]["name"] == "read"


def rewritten_with_new_messages(old_log: Path, new_log: Path) -> None:
    """`old_log`'s events, each turn stored as the writer stores it now."""
    reader, writer, log = TurnContexts(), TurnContexts(), SessionLog(new_log)
    for event in read_events(old_log):
        if isinstance(event, LLMTurn):
            stored = writer.stored(reader.context_of(event), event.response)
            event = LLMTurn(**{**vars(event), "messages": None, **stored})
        log.append(event)


def test_an_old_format_log_reads_to_the_same_trajectory_as_its_rewrite(tmp_path):
    old = read_trajectory(OLD_FORMAT / LOG_NAME)
    rewritten_with_new_messages(OLD_FORMAT / LOG_NAME, tmp_path / LOG_NAME)
    assert all(isinstance(e.new_messages, list) and e.messages is None
               for e in read_events(tmp_path / LOG_NAME) if isinstance(e, LLMTurn))
    assert (tmp_path / LOG_NAME).stat().st_size < (OLD_FORMAT / LOG_NAME).stat().st_size * 0.75
    assert read_trajectory(tmp_path / LOG_NAME).turns == old.turns


def test_an_old_format_log_resumes_and_goes_on_storing_only_new_messages(tmp_path):
    """The old log ended at --max-turns 2; resumed, the transcript's third message (done) is turn 3."""
    sessions = tmp_path / "sessions"
    session_id = json.loads((OLD_FORMAT / LOG_NAME).read_text().splitlines()[0])["session_id"]
    directory = sessions / session_id
    Workspace.create(directory / WORKSPACE_NAME, TASK, {})
    shutil.copy(OLD_FORMAT / LOG_NAME, directory / LOG_NAME)
    transcript = OLD_FORMAT / "transcript.json"
    resumed = SessionController(SessionSettings(resume=session_id, sessions_root=sessions,
                                                model=f"replay:{transcript}"), lambda event: None)
    assert resumed.run().reason == "done"

    first, second, third = [e for e in read_events(directory / LOG_NAME) if isinstance(e, LLMTurn)]
    assert first.messages is not None and second.messages is not None and third.messages is None
    assert [m["tool_call_id"] for m in third.new_messages] == ["call_write", "call_eval"]
    trajectory = read_trajectory(directory / LOG_NAME)
    assert trajectory.turns[2].context == [*second.messages, second.response, *third.new_messages]
    assert trajectory.reward == -1 and trajectory.tool_errors == 1
