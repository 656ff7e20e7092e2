"""Pilot tests of the app on a scripted session: review, accept / reject / undo, steering, prompts, themes, keys."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import git
import pytest
from conftest import settle
from fixtures import FILES, ScriptedSession, script
from rich.console import Console
from textual.content import Content
from textual.widgets._footer import FooterKey

from kernelpilot.session.events import (
    LLMTurn,
    PermissionAsked,
    SessionStarted,
    TokenDelta,
    ToolCall,
    ToolResult,
)
from kernelpilot.tui.app import KernelpilotApp, _run_app
from kernelpilot.tui.commands import ActionsProvider
from kernelpilot.tui.gpu import GpuSample
from kernelpilot.tui.widgets.candidates import CandidatesTable
from kernelpilot.tui.widgets.compile_log import CompileLog
from kernelpilot.tui.widgets.diff_view import DiffView
from kernelpilot.tui.widgets.gpu_panel import describe
from kernelpilot.tui.widgets.kernel_view import KernelView
from kernelpilot.tui.widgets.transcript import Transcript

SIZE = (160, 48)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's git project holding the task file."""
    repo = git.Repo.init(tmp_path, initial_branch="main")
    repo.config_writer().set_value("user", "name", "t").set_value("user", "email", "t@t").release()
    (tmp_path / "model.py").write_text("# the user's model\n")
    repo.git.add("model.py")
    repo.git.commit("-m", "my model")
    return tmp_path / "model.py"


def make_app(task: Path, events=None, started: threading.Event | None = None,
             **kwargs) -> tuple[KernelpilotApp, list[ScriptedSession]]:
    sessions: list[ScriptedSession] = []

    def connect(on_event):
        sessions.append(ScriptedSession(on_event, events if events is not None else script(str(task)),
                                        started=started))
        return sessions[0]

    app = KernelpilotApp(connect, task_path=task, gpu_interval=0, **kwargs)
    app.NOTIFICATION_TIMEOUT = 600  # Textual drops a notification 5 s after it is raised: a loaded machine's tests outlast that
    return app, sessions


def text_of(app: KernelpilotApp, selector: str) -> str:
    """What a Static shows, as plain text (Rich renderables included)."""
    console = Console(width=150, record=True, file=io.StringIO())
    content = app.query_one(selector).content
    console.print(content if not isinstance(content, Content) else str(content))
    return console.export_text()


def footer_key(app: KernelpilotApp, action: str) -> FooterKey:
    return next(key for key in app.query(FooterKey) if key.action == action)


def footer_keys(app: KernelpilotApp) -> list[str]:
    """The keys the footer shows, less the command palette's."""
    return [key.key for key in app.query(FooterKey) if key.action != "command_palette"]


async def select(pilot, candidate_id: int) -> None:
    table = pilot.app.query_one(CandidatesTable)
    table.move_cursor(row=table.get_row_index(str(candidate_id)))
    await settle(pilot)


async def test_candidates_appear_with_status_speedups_and_best(project):
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one(CandidatesTable)
        assert [c.result.status for c in app.view.candidates.values()] == [
            "correct", "wrong", "correct", "build_failed", "guard_violation"]
        assert app.view.best_id == 3 and table.row_count == 5
        assert "★ best" in str(table.get_cell("3", "mark"))
        assert str(table.get_cell("3", "compile")) == "1.51×"
        notes = [entry.text for entry in app.query_one(Transcript).entries if entry.kind == "note"]
        assert "▸ candidate 3: correct, 1.51× vs torch.compile" in notes
        assert "▸ candidate 5: guard_violation (op_audit)" in notes


async def test_selecting_a_candidate_shows_its_diff_correctness_and_timings(project):
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 2)
        diff = app.query_one(DiffView)
        assert {h.path for h in diff.hunks} == {"model_new.py", "kernels/relu_bias_scale.cpp"}
        assert "wrong results" in text_of(app, "#correctness-report")
        await pilot.press("d")  # vs the previous candidate: only the changed comparison
        await settle(pilot)
        assert diff.base == "previous"
        assert [h.path for h in diff.hunks] == ["kernels/relu_bias_scale.cpp"]
        assert any("+" in line and "v >= 1.f" in line for line in diff.hunks[0].lines)
        await select(pilot, 3)
        app.query_one("#views").active = "tab-timing"
        await pilot.pause()
        assert "vs torch.compile 1.51×" in text_of(app, "#timing-report")
        assert app.query_one("#history").data == [0.886, 0.0, 1.51, 0.0, 0.0]


async def test_a_build_errors_location_opens_the_kernel_at_that_line(project):
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 4)
        await pilot.press("5")  # the build log
        await pilot.pause()
        links = [segment.style.meta["@click"] for strip in app.query_one(CompileLog).lines for segment in strip
                 if segment.style and "@click" in segment.style.meta]
        assert links == ["show_source('kernels/relu_bias_scale.cpp', 4)"]
        await app.run_action(links[0], app.query_one(CompileLog))  # what a click on the link does
        await pilot.pause()
        assert app.query_one("#views").active == "tab-kernel"
        kernel = app.query_one(KernelView)
        backgrounds = [frozenset(s.style.bgcolor for s in strip if s.text.strip()) for strip in kernel.strips]
        usual = max(set(backgrounds), key=backgrounds.count)
        marked = [y for y, background in enumerate(backgrounds) if background and background != usual]
        source_line = FILES["c3"]["kernels/relu_bias_scale.cpp"].splitlines()[3].strip()
        assert len(marked) == 1 and kernel.strips[marked[0]].text.split() == ["4", *source_line.split()]
        assert kernel.scroll_offset.y <= marked[0] < kernel.scroll_offset.y + kernel.scrollable_content_region.height


async def test_accept_writes_the_candidate_and_commits_it(project):
    app, sessions = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 3)
        await pilot.press("a")
        await settle(pilot)
    repo = git.Repo(project.parent)
    written = project.parent / "model_kernelpilot" / "kernels" / "relu_bias_scale.cpp"
    assert written.read_text() == FILES["c3"]["kernels/relu_bias_scale.cpp"]
    assert repo.active_branch.name == "main" and len(list(repo.iter_commits())) == 1
    commit = repo.heads["kernelpilot/s-test"].commit
    assert "accept candidate 3" in commit.message and "reward 3" in commit.message
    assert sessions[0].decisions[0][:2] == ("accept", 3)
    said = [n.message for n in app._notifications if n.title == "accepted candidate 3"]
    assert said[0].startswith("wrote model_kernelpilot/ (2 files) next to model.py; committed "), said
    assert said[0].endswith(" on branch kernelpilot/s-test, your checked-out branch is unchanged")


async def test_a_failed_accept_is_said_in_one_notification_and_the_app_goes_on(project):
    app, sessions = make_app(project)
    (project.parent / "model_kernelpilot").write_text("a file where the accepted folder goes\n")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 3)
        await pilot.press("a")
        await settle(pilot)
        failed = [n for n in app._notifications if n.title == "accept failed"]
        assert len(failed) == 1 and failed[0].severity == "error", [n.title for n in app._notifications]
        assert app.is_running and not sessions[0].decisions


async def test_accept_is_unavailable_for_a_wrong_candidate_and_reject_changes_nothing(project):
    app, sessions = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 3)
        accept_key = footer_key(app, "accept")
        assert not accept_key.disabled
        await select(pilot, 2)
        assert not app.check_action("accept", ())
        assert footer_key(app, "accept") is accept_key and accept_key.disabled  # greyed out in place
        await pilot.press("a", "r")
        await settle(pilot)
        assert str(app.query_one(CandidatesTable).get_cell("2", "mark")) == "rejected"
    repo = git.Repo(project.parent)
    assert sorted(p.name for p in project.parent.iterdir()) == [".git", "model.py"]
    assert repo.active_branch.name == "main" and len(list(repo.iter_commits())) == 1
    assert sessions[0].decisions == [("reject", 2, {})]


async def test_a_second_r_takes_a_rejection_back(project):
    app, sessions = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 3)
        await pilot.press("r")
        await settle(pilot)
        assert str(app.query_one(CandidatesTable).get_cell("3", "mark")) == "★ best rejected"
        await pilot.press("r")
        await settle(pilot)
        assert str(app.query_one(CandidatesTable).get_cell("3", "mark")).strip() == "★ best"
        assert app.view.session.marks == {}
    assert [d[:2] for d in sessions[0].decisions] == [("reject", 3), ("unreject", 3)]


async def test_chosen_hunks_only_and_undo(project):
    app, sessions = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 1)
        app.query_one("#hunks").focus()
        hunk_ids = [h.id for h in app.query_one(DiffView).hunks]
        await pilot.press("down", "space")  # the second hunk: model_new.py
        assert app.query_one(DiffView).chosen == {hunk_ids[1]}
        await pilot.press("a")
        await settle(pilot)
        accepted = project.parent / "model_kernelpilot"
        assert sorted(str(p.relative_to(accepted)) for p in accepted.rglob("*.*")) == ["model_new.py"]
        assert sessions[0].decisions[-1][2]["evaluated"] is False
        message = git.Repo(project.parent).heads["kernelpilot/s-test"].commit.message
        assert "status: not evaluated" in message and "reward" not in message
        await pilot.press("u")
        await settle(pilot)
        assert not (accepted / "model_new.py").exists()
        assert not app.check_action("undo", ())


def transcript_lines(app: KernelpilotApp) -> list[str]:
    """The transcript's visible lines, as drawn."""
    transcript = app.query_one(Transcript)
    return [transcript.render_line(y).text.rstrip() for y in range(transcript.scrollable_content_region.height)]


async def test_tool_calls_stay_folded_until_clicked_or_opened_with_enter(project):
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        folded = "▶ ✓ write kernels/relu_bias_scale.cpp"
        assert folded in transcript_lines(app) and "wrote 9 lines" not in transcript_lines(app)

        await pilot.click(Transcript, offset=(3, transcript_lines(app).index(folded)))
        await pilot.pause(0.1)
        shown = transcript_lines(app)
        assert "▼ ✓ write kernels/relu_bias_scale.cpp" in shown and "wrote 9 lines" in shown
        assert '  "path": "kernels/relu_bias_scale.cpp"' in shown

        await pilot.press("enter")  # the clicked call is selected and the transcript has the focus
        await pilot.pause(0.1)
        assert folded in transcript_lines(app) and "wrote 9 lines" not in transcript_lines(app)

        await pilot.press("up", "enter")  # up from the only call stays on it
        await pilot.pause(0.1)
        assert "wrote 9 lines" in transcript_lines(app)



async def test_a_history_arriving_at_once_shows_its_end_at_80_by_24_until_the_user_scrolls_up(project):
    """As on `--resume`: the whole log arrives while the panes take their widths."""
    *events, ended = script(str(project))
    for number in range(60):
        events += [ToolCall(turn=1, call_id=f"r{number}", name="read", arguments={"path": f"f{number}.py"}, ts=0.0),
                   ToolResult(turn=1, call_id=f"r{number}", name="read", output="...", ts=0.0)]
    app, _ = make_app(project, events=[*events, ended])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause(0.2)
        transcript = app.query_one(Transcript)
        assert transcript.max_scroll_y > 0 and transcript.is_vertical_scroll_end
        assert "session ended: done" in transcript_lines(app)
        transcript.scroll_home(animate=False, immediate=True)
        transcript.add_note("one more line")
        await pilot.pause(0.2)
        assert transcript.scroll_y == 0, "reading back up is not interrupted by what arrives"

async def test_tool_calls_written_as_text_show_folded_not_as_json(project):
    """Models without native tool calling write calls as fenced JSON; once the turn ends the prose
    stays and the call shows folded, like a native one."""
    block = '```json\n{"tool": "read", "arguments": {"path": "task.py"}}\n```'
    said = f"Reading the task first.\n\n{block}"
    started, *rest = script(str(project))
    events = [started, *(TokenDelta(turn=1, text=said[i:i + 7], ts=0.0) for i in range(0, len(said), 7)),
              LLMTurn(turn=1, messages=[], response={"content": said}, ts=0.0),
              ToolCall(turn=1, call_id="text-1-0", name="read", arguments={"path": "task.py"}, ts=0.0),
              TokenDelta(turn=2, text=block, ts=0.0),
              LLMTurn(turn=2, messages=[], response={"content": block}, ts=0.0),
              ToolCall(turn=2, call_id="text-2-0", name="list", arguments={}, ts=0.0)]
    app, _ = make_app(project, events=events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = [line for line in transcript_lines(app) if line]
        assert shown == ["Reading the task first.", "▶ … read task.py", "▶ … list"]


async def test_manual_mode_says_where_to_edit_and_shows_failed_saves(project):
    started = SessionStarted(session_id="s-test", task_path=str(project), task_sha256="0" * 64, skill="cpu",
                             model="manual", sampling={}, device="cpu", ts=0.0)
    failed = ToolResult(turn=0, call_id="manual", name="evaluate", output="model_new.py is missing", ok=False,
                        ts=0.0)
    app, _ = make_app(project, events=[started, failed])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        shown = " ".join(line for line in transcript_lines(app) if line)
        assert "manual mode: edit model_new.py and kernels/ in workspace" in shown
        assert "▶ ✗ evaluate" in shown
        assert not app.query_one("#steer").display
        assert not {"focus_steer", "steer_ended", "pause", "stop"} & {key.action for key in app.query(FooterKey)}
        await pilot.press("i", "p", "x")
        assert app.focused is app.query_one(CandidatesTable)



async def test_manual_mode_offers_the_editor_while_it_runs_and_an_agent_session_does_not(project, monkeypatch):
    """Under a pilot the app cannot hand the terminal over, and says what it would have run."""
    started = SessionStarted(session_id="s-test", task_path=str(project), task_sha256="0" * 64, skill="cpu",
                             model="manual", sampling={}, device="cpu", ts=0.0)
    monkeypatch.setenv("EDITOR", "my-editor --wait")
    monkeypatch.delenv("VISUAL", raising=False)
    saving = threading.Event()

    class Watching(ScriptedSession):
        def run(self) -> str:
            super().run()
            saving.wait()  # manual mode runs until the user stops it
            return "interrupted"

    app = KernelpilotApp(lambda on_event: Watching(on_event, [started]), task_path=project, gpu_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        assert app.view.running and "e" in footer_keys(app)
        assert str(app.query_one("#status").content) == "manual · 0 saves · running", "no turns, no cost"
        await pilot.press("e")
        await pilot.pause(0.1)
        said = [n.message for n in app._notifications if n.title == "edit"]
        assert said == ["this terminal cannot hand over to an editor: in workspace, run my-editor --wait model_new.py"]
        saving.set()
        await settle(pilot)
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "e" not in footer_keys(app) and not app.check_action("edit", ())

async def test_steering_goes_to_a_running_session_only(project):
    started = threading.Event()
    app, sessions = make_app(project, started=started)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("i", *"use float4", "enter")
        assert sessions[0].steered == ["use float4"]
        started.set()
        await settle(pilot)
        assert "you › use float4" in [entry.text for entry in app.query_one(Transcript).entries if entry.kind == "user"]
        assert not app.check_action("focus_steer", ()) and "session ended" in app.query_one("#steer").placeholder
        await pilot.press("i", *"more", "enter")
        await pilot.pause()
        assert sessions[0].steered == ["use float4"]
        assert [n.title for n in app._notifications] == ["session ended", "not sent"]


async def test_typing_when_the_session_ends_stays_in_the_steering_box(project):
    started = threading.Event()
    app, sessions = make_app(project, started=started)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("i", *"try AVX2 ")
        started.set()
        await settle(pilot)
        await pilot.press(*"intrinsics, accept or reject")
        await settle(pilot)
        steer = app.query_one("#steer")
        assert steer.has_focus and steer.value == "try AVX2 intrinsics, accept or reject"
        assert sessions[0].decisions == [] and not app.view.session.marks
        assert "session ended" in [n.title for n in app._notifications]
        await pilot.press("escape")
        assert footer_keys(app) == ["a", "r", "u", "d", "f", "q"], "no steer, pause or stop keys after the end"


async def test_the_cursor_rests_on_the_best_candidate_at_the_end(project):
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.query_one(CandidatesTable)
        assert app.view.best_id == 3 and table.selected_id == app.view.selected == 3
        assert app.loaded is not None and app.loaded.candidate_id == 3


def test_quitting_prints_the_session_id_and_how_to_come_back(project, monkeypatch, capsys):
    def run(app):
        app.session_done.set()

    monkeypatch.setattr(KernelpilotApp, "run", run)
    _run_app(lambda on_event: ScriptedSession(on_event, script(str(project))), read_only=False)
    assert capsys.readouterr().out.splitlines() == [
        "kernelpilot: session s-test saved",
        "  kernelpilot optimize --resume s-test   continues it",
        "  kernelpilot sessions show s-test   reviews it",
    ]



def test_quitting_a_finished_session_offers_review_and_export_not_resume(project, monkeypatch, capsys):
    """`--resume` of a session the agent ended with done only prints its summary: not a way back worth offering."""
    session = ScriptedSession(lambda event: None, script(str(project)))

    def open_session(on_event):
        session.on_event = on_event
        return session

    def run(app):
        session.run()
        app.session_done.set()

    monkeypatch.setattr(KernelpilotApp, "run", run)
    monkeypatch.setattr(KernelpilotApp, "_deliver", lambda app, event: None)
    _run_app(open_session, read_only=False)
    assert capsys.readouterr().out.splitlines() == [
        "kernelpilot: session s-test finished",
        "  kernelpilot sessions show s-test   reviews it",
        "  kernelpilot sessions export s-test   writes its best candidate",
    ]

async def test_space_chooses_a_hunk_as_soon_as_the_diff_is_shown(project):
    app, _ = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 1)
        await pilot.press("1", "space")
        diff = app.query_one(DiffView)
        assert diff.chosen == {diff.hunks[0].id}
        await pilot.press("escape", "tab", "down", "space")  # from the candidates, one tab reaches the diff
        assert diff.chosen == {diff.hunks[0].id, diff.hunks[1].id}


async def test_permission_prompt_answers_the_session(project):
    events = [*script(str(project))[:1], PermissionAsked(request_id="r1", command="nvcc --version", ts=0.0)]
    app, sessions = make_app(project, events=events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "nvcc --version" in str(app.screen.query_one("#command").render())
        await pilot.press("o")
        await settle(pilot)
        assert sessions[0].permissions == [("r1", "once")]


async def test_palette_offers_accept_only_with_a_candidate_selected(project):
    events = script(str(project))[:1]
    app, _ = make_app(project, events=events)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        provider = ActionsProvider(app.screen)
        titles = [title for title, _, _ in provider._commands()]
        assert "Accept" not in titles and "Quit" in titles
        system_titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Theme" in system_titles and "Quit" not in system_titles, "Quit is offered once, not twice"


async def test_theme_choice_is_remembered(project, config_home):
    app, _ = make_app(project, events=[])
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "kernelpilot-dark"
        app.theme = "kernelpilot-high-contrast"
        await pilot.pause()
    assert 'theme = "kernelpilot-high-contrast"' in (config_home / "kernelpilot" / "state.toml").read_text()
    app, _ = make_app(project, events=[])
    async with app.run_test(size=SIZE):
        assert app.theme == "kernelpilot-high-contrast"


async def test_user_themes_and_key_remaps_load_from_the_config_dir(project, config_home):
    (config_home / "kernelpilot" / "themes").mkdir(parents=True)
    (config_home / "kernelpilot" / "themes" / "mine.toml").write_text('primary = "#ff0000"\ndark = false\n')
    (config_home / "kernelpilot" / "config.toml").write_text('[keys]\naccept = "y"\n')
    app, sessions = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "mine" in app.available_themes
        await select(pilot, 3)
        await pilot.press("y")
        await settle(pilot)
        assert sessions[0].decisions[0][:2] == ("accept", 3)


async def test_read_only_session_can_be_reviewed_but_not_changed(project):
    app, _ = make_app(project, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await select(pilot, 3)
        assert app.query_one(DiffView).hunks
        assert not app.check_action("accept", ()) and app.check_action("pause", ()) is False
        assert app.query_one("#steer").disabled
        assert app.query_one("#steer").placeholder.startswith("read-only review")
        await pilot.press("1", "space")
        diff = app.query_one(DiffView)
        assert diff.chosen == set() and "space" not in str(app.query_one("#diff-title").content)
        assert {key.action for key in app.query(FooterKey)} == {"cycle_diff_base", "quit", "command_palette"}


async def test_gpu_panel_says_when_there_is_no_gpu(project, monkeypatch):
    monkeypatch.setattr("kernelpilot.tui.widgets.gpu_panel.sample_gpu", lambda: None)
    app, _ = make_app(project, events=[SessionStarted(session_id="s", task_path=str(project), task_sha256="",
                                                      skill="cuda", model="m", sampling={}, device="cpu")])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "no NVIDIA GPU" in text_of(app, "#gpu")


def test_gpu_panel_warns_when_other_processes_use_the_gpu():
    sample = GpuSample(name="NVIDIA H200", utilisation_pct=97, memory_used_mib=40_000, memory_total_mib=143_771,
                       temperature_c=61, sm_clock_mhz=1980, memory_clock_mhz=3201, throttle_reasons=("power cap",),
                       other_processes=(4242,))
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(describe(sample))
    shown = console.export_text()
    assert "NVIDIA H200" in shown and "power cap" in shown
    assert "busy with other processes (4242): timings are unreliable" in shown


async def test_an_80_by_24_terminal_shows_every_column_and_key(project):
    started = threading.Event()
    app, _ = make_app(project, started=started)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        keys = [key for key in app.query(FooterKey)]
        assert [key.key for key in keys] == ["a", "r", "u", "d", "f", "i", "p", "x", "q"]
        assert max(key.region.right for key in keys) <= 80, "the running session's keys all fit"
        await pilot.press("i")
        await pilot.pause()
        assert footer_keys(app) == ["enter", "escape"], "typing in the steering box: how to send, how to leave"
        await pilot.press("escape")
        await pilot.pause()
        assert footer_keys(app) == ["a", "r", "u", "d", "f", "i", "p", "x", "q"]
        started.set()
        await settle(pilot)
        table = app.query_one(CandidatesTable)
        widths = sum(column.get_render_width(table) for column in table.columns.values())
        assert widths <= table.scrollable_content_region.width
        assert [str(column.label) for column in table.columns.values()] == ["#", "status", "eager", "compile", "R", ""]
        assert str(table.get_cell("3", "reward")) == "+3" and str(table.get_cell("3", "mark")) == "★ "
        title = str(app.query_one("#diff-title").content)
        assert "space chooses" in title and len(title) <= app.query_one("#diff-title").content_region.width, title
        await pilot.press("3")
        await settle(pilot)
        report = text_of(app, "#correctness-report")
        assert "┃ output 0" in report and "│ mismatched" in report, "one column per output, its fields down the side"
        await select(pilot, 4)
        await pilot.press("5")
        await settle(pilot)
        log = app.query_one(CompileLog)
        assert max(strip.cell_length for strip in log.lines) <= log.scrollable_content_region.width, "wrapped, not cut"
        assert "error: expected ';' before 'for'" in " ".join(strip.text.strip() for strip in log.lines)
