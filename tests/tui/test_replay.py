"""The app on real replayed sessions (CPU): the recorded transcript drives the agent, while the workspace,
builds and evaluations are live; then the finished session opens read-only."""

from __future__ import annotations

import shutil
from pathlib import Path

import git
import pytest
from conftest import settle
from test_app import SIZE, select, text_of

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.session.events import LLMTurn, UserMessage
from kernelpilot.session.log import read_events
from kernelpilot.session.store import LOG_NAME
from kernelpilot.tui.app import KernelpilotApp
from kernelpilot.tui.widgets.candidates import CandidatesTable
from kernelpilot.tui.widgets.diff_view import DiffView
from kernelpilot.tui.widgets.transcript import Transcript

EXAMPLE = Path(__file__).parents[2] / "examples" / "relu_bias"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The user's git project with the example model in it."""
    repo = git.Repo.init(tmp_path, initial_branch="main")
    repo.config_writer().set_value("user", "name", "t").set_value("user", "email", "t@t").release()
    shutil.copyfile(EXAMPLE / "model.py", tmp_path / "model.py")
    repo.git.add("model.py")
    repo.git.commit("-m", "my model")
    return tmp_path / "model.py"


def settings(task: Path, **overrides) -> SessionSettings:
    return SessionSettings(task_path=task, model=f"replay:{EXAMPLE / 'transcript.json'}", device="cpu",
                           sessions_root=task.parent / ".kernelpilot" / "sessions", **overrides)


def session_log(app: KernelpilotApp):
    return read_events(app.driver.session.log_path)


async def test_steering_message_joins_the_agents_next_turn(project):
    def paused_session(on_event):
        controller = SessionController(settings(project, max_turns=1), on_event)
        controller.pause()
        return controller

    app = KernelpilotApp(paused_session, gpu_interval=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("i", *"prefer float4 loads", "enter")
        app.driver.resume()
        await settle(pilot)
        events = session_log(app)
        assert [entry.text for entry in app.query_one(Transcript).entries if entry.kind == "user"] == [
            "you › prefer float4 loads"]
    assert [e.text for e in events if isinstance(e, UserMessage)] == ["prefer float4 loads"]
    first_turn = next(e for e in events if isinstance(e, LLMTurn))
    assert first_turn.new_messages[-1] == {"role": "user", "content": "prefer float4 loads"}


@pytest.mark.slow
async def test_replayed_session_review_reject_accept_then_read_only(project):
    app = KernelpilotApp(lambda on_event: SessionController(settings(project), on_event), gpu_interval=0)
    repo = git.Repo(project.parent)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert [c.result.status for c in app.view.candidates.values()] == ["build_failed", "correct"]
        assert app.view.best_id == 2

        await select(pilot, 2)
        await select(pilot, 1)
        await pilot.press("5")  # the build log
        await pilot.pause()
        assert "error" in "\n".join(str(line.text) for line in app.query_one("#build-log").lines)
        await pilot.press("r")
        await settle(pilot)
        assert repo.git.status("--porcelain") == "" and repo.active_branch.name == "main"

        await select(pilot, 2)
        await pilot.press("d")  # against the previous candidate: the fixed semicolon
        await settle(pilot)
        hunks = app.query_one(DiffView).hunks
        assert [h.path for h in hunks] == ["kernels/relu_bias_scale.cpp"]
        assert "+      float v = xr[c] + bias[c];" in hunks[0].lines
        assert "correct" in text_of(app, "#correctness-report")
        assert "vs torch.compile" in text_of(app, "#timing-report")
        await pilot.press("a")
        await settle(pilot)
        session_dir = app.driver.session.directory
    kernel = project.parent / "model_kernelpilot" / "kernels" / "relu_bias_scale.cpp"
    assert "bias[c];" in kernel.read_text()
    assert repo.active_branch.name == "main"
    commit = repo.heads[f"kernelpilot/{session_dir.name}"].commit
    assert "accept candidate 2" in commit.message and "status: correct" in commit.message
    decisions = [(e.decision, e.candidate_id) for e in read_events(session_dir / LOG_NAME) if e.kind == "user_decision"]
    assert decisions == [("reject", 1), ("accept", 2)]

    review = KernelpilotApp(lambda on_event: SessionController.open(session_dir.name, on_event, session_dir.parent),
                            read_only=True, gpu_interval=0)
    async with review.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert list(review.view.candidates) == [1, 2] and review.view.session.marks == {1: "rejected", 2: "accepted"}
        assert str(review.query_one(CandidatesTable).get_cell("1", "mark")) == "rejected"
        await select(pilot, 2)
        assert review.query_one(DiffView).hunks and not review.check_action("accept", ())
