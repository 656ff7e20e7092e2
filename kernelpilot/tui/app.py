"""The kernelpilot app: watch the agent, steer it, review candidates and accept kernels.

The app composes the widgets and keeps what they show in a `ViewModel`, changed in one place (`_route`) by the
session's events; widgets draw from it and post their own messages up (`CandidatesTable.Highlighted`,
`CompileLog.SourceClicked`, `SteerInput.Left`). The session itself (agent turns, builds, evaluations) runs in a
thread; its events wait in an inbox that the loop drains on a `SessionEventsWaiting` message, so the loop never
waits on the session. Every worker's failure is told in one place (`Worker.StateChanged`).
"""

from __future__ import annotations

import asyncio
import gc
import shlex
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult, SuspendNotSupported, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Header, Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from kernelpilot.errors import KernelpilotError
from kernelpilot.harness.result import format_speedup
from kernelpilot.session.accept import FORMS, Acceptance, Project
from kernelpilot.session.events import (
    BuildLogLine,
    Evaluation,
    LLMTurn,
    PermissionAsked,
    SessionEnded,
    SessionEvent,
    SessionStarted,
    TokenDelta,
    ToolCall,
    ToolResult,
    UserDecision,
    UserMessage,
)
from kernelpilot.session.state import REJECTED
from kernelpilot.session.store import FINISHED
from kernelpilot.tui.commands import ActionsProvider
from kernelpilot.tui.config import load_keymap, load_state, save_state
from kernelpilot.tui.driver import SessionDriver
from kernelpilot.tui.editor import editor_command
from kernelpilot.tui.messages import (
    CandidateLoaded,
    SessionEventsWaiting,
    SessionFinished,
)
from kernelpilot.tui.screens.permission import PermissionScreen
from kernelpilot.tui.themes import DEFAULT_THEME, load_themes
from kernelpilot.tui.widgets.candidates import CandidatesTable
from kernelpilot.tui.widgets.compile_log import CompileLog
from kernelpilot.tui.widgets.correctness import CorrectnessView
from kernelpilot.tui.widgets.diff_view import DiffView
from kernelpilot.tui.widgets.footer import KeyFooter
from kernelpilot.tui.widgets.gpu_panel import GpuPanel
from kernelpilot.tui.widgets.kernel_view import KernelView
from kernelpilot.tui.widgets.steer import SteerInput
from kernelpilot.tui.widgets.timing import TimingView
from kernelpilot.tui.view_model import ViewModel
from kernelpilot.tui.widgets.transcript import Transcript

INBOX_BATCH = 50
"""Events handled per turn of the loop: a burst (a replay, fast tokens) is drawn in a few frames,
and key presses get their turn in between."""

VIEWS = {"diff": "Diff", "kernel": "Kernel", "correctness": "Correctness", "timing": "Timing",
         "build": "Build log", "gpu": "GPU"}
"""Tab id suffix → title, in tab order (keys 1–6)."""

LIVE_ACTIONS = {"accept", "reject", "undo", "toggle_form", "pause", "stop", "focus_steer", "steer_ended", "edit"}
"""What a read-only session (`sessions show`) does not offer."""

AGENT_ACTIONS = {"pause", "stop", "focus_steer", "steer_ended"}
"""What a manual session, with no agent, does not offer."""

STEER_PLACEHOLDER = "steer the agent: a message for its next turn (enter sends)"
ENDED_PLACEHOLDER = "session ended: the agent takes no more messages"
READ_ONLY_PLACEHOLDER = "read-only review: `optimize --resume` continues a session"

WIDGET_STYLESHEETS = sorted((Path(__file__).parent / "widgets").glob("*.tcss"))
"""Each widget's stylesheet lives beside its module."""

QUIT_GRACE_S = 2.0
"""How long a quit waits for the stopped session to end its step before leaving it."""

DriverFactory = Callable[[Callable[[SessionEvent], None]], SessionDriver]
"""Builds the session driver, given the callback it reports events through (from any thread)."""


class KernelpilotApp(App[int]):
    CSS_PATH = ["app.tcss", *WIDGET_STYLESHEETS]
    TITLE = "kernelpilot"
    COMMANDS = App.COMMANDS | {ActionsProvider}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    BINDINGS = [
        Binding("a", "accept", "Accept", id="accept",
                tooltip="write the selected candidate (or its chosen hunks) into your project"),
        Binding("r", "reject", "Reject", id="reject",
                tooltip="mark the selected candidate rejected, or take its rejection back"),
        Binding("u", "undo", "Undo", id="undo", tooltip="take back the last accept"),
        Binding("d", "cycle_diff_base", "Diff base", id="diff_base",
                tooltip="diff against the accepted state, the previous or the best candidate"),
        Binding("f", "toggle_form", "Form", id="accept_form",
                tooltip="accept as a workspace folder or as one KernelBench-style file"),
        Binding("e", "edit", "Edit", id="edit",
                tooltip="open model_new.py and kernels/ in your $VISUAL or $EDITOR: each save is evaluated"),
        Binding("i", "focus_steer", "Steer", id="steer", tooltip="type a message for the agent's next turn"),
        Binding("i", "steer_ended", show=False, id="steer",
                tooltip="the session has ended: what you type stays in the steering box, away from the keys"),
        Binding("p", "pause", "Pause", id="pause", tooltip="pause or resume the agent"),
        Binding("x", "stop", "Stop", id="stop", tooltip="stop the session"),
        Binding("q", "quit", "Quit", id="quit", tooltip="leave kernelpilot (the session log is kept)"),
        Binding("escape", "focus_candidates", "Candidates", id="candidates", show=False,
                tooltip="back to the candidates list (from the steering input)"),
        *(Binding(str(number), f"show_view('{view}')", f"Show {title}", id=f"view_{view}", show=False,
                  tooltip="the GPU's readings" if view == "gpu" else f"the {title.lower()} view of the selected candidate")
          for number, (view, title) in enumerate(VIEWS.items(), 1)),
    ]

    def __init__(self, connect: DriverFactory, *, task_path: Path | None = None, read_only: bool = False,
                 gpu_interval: float = 2.0) -> None:
        super().__init__()
        self._connect = connect
        self.read_only = read_only
        self.task_path = task_path
        self.gpu_interval = gpu_interval
        self.driver: SessionDriver | None = None
        self.project: Project | None = None
        self.view = ViewModel(read_only)
        self.loaded: CandidateLoaded | None = None
        self.accept_form = load_state().get("accept_form", "workspace")
        self._inbox: deque[SessionEvent] = deque()
        self._inbox_lock = threading.Lock()
        self._inbox_signalled = False
        self._shown_state = ""
        self._shown_status = ""
        self.session_done = threading.Event()
        themes, self._theme_problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        remembered = load_state().get("theme", DEFAULT_THEME)
        self.theme = remembered if remembered in self.available_themes else DEFAULT_THEME

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield Static(id="status")
                yield Transcript(id="transcript")
                yield SteerInput(placeholder=READ_ONLY_PLACEHOLDER if self.read_only else STEER_PLACEHOLDER, id="steer",
                                 disabled=self.read_only)
            with Vertical(id="right"):
                yield CandidatesTable(id="candidates")
                with TabbedContent(id="views"):
                    with TabPane(VIEWS["diff"], id="tab-diff"):
                        yield DiffView(choosable=not self.read_only, id="diff")
                    with TabPane(VIEWS["kernel"], id="tab-kernel"):
                        yield KernelView(id="kernel")
                    with TabPane(VIEWS["correctness"], id="tab-correctness"):
                        yield CorrectnessView(id="correctness")
                    with TabPane(VIEWS["timing"], id="tab-timing"):
                        yield TimingView(id="timing")
                    with TabPane(VIEWS["build"], id="tab-build"):
                        yield CompileLog(id="build-log")
                    with TabPane(VIEWS["gpu"], id="tab-gpu"):
                        yield GpuPanel(interval=self.gpu_interval, id="gpu")
        yield KeyFooter()

    def on_mount(self) -> None:
        # Modules (torch's among them) and the widget tree live as long as the app: out of the cyclic
        # collector's way, full collections stop stalling the loop for 100 ms and more.
        gc.freeze()
        for problem in self._theme_problems:
            self.notify(problem, title="theme file skipped", severity="warning")
        self.set_keymap(load_keymap())
        self.query_one("#views Tabs").can_focus = False  # views switch with 1–6: one tab reaches the diff
        self.driver = self._connect(self._deliver)
        self.view.running = not self.read_only
        self.run_session()  # a read-only session replays its log
        self.query_one(CandidatesTable).focus()

    def watch_theme(self, theme: str) -> None:
        if self.is_mounted:
            save_state(theme=theme)

    # Session: runs in a thread; its events come back as messages.

    def _deliver(self, event: SessionEvent) -> None:
        """Called from the session's threads. One message per burst: a message per token would
        queue hundreds of dispatches ahead of the user's key presses."""
        with self._inbox_lock:
            self._inbox.append(event)
            if self._inbox_signalled:
                return
            self._inbox_signalled = True
        self.post_message(SessionEventsWaiting())

    def run_session(self) -> None:
        """The session gets a daemon thread of its own rather than a worker: Textual joins its workers'
        threads on exit, and quitting must not wait for a build or an evaluation to end (the log is
        flushed per event, so `optimize --resume` continues an interrupted session)."""
        threading.Thread(target=self._run_session, name="kernelpilot-session", daemon=True).start()

    def _run_session(self) -> None:
        try:
            summary = self.driver.run()
        except Exception as error:  # a crashing session must not take the app down with it
            self.post_message(SessionFinished(None, error=f"{type(error).__name__}: {error}"))
            return
        finally:
            self.session_done.set()
        self.post_message(SessionFinished(summary))

    @on(SessionEventsWaiting)
    async def _on_session_events(self) -> None:
        """A batch of events at a time, with the loop let in between: a backlog (a replay, a burst of
        tool calls) drains over several frames instead of holding the loop for all of it."""
        with self._inbox_lock:
            batch = [self._inbox.popleft() for _ in range(min(INBOX_BATCH, len(self._inbox)))]
            more = bool(self._inbox)
            self._inbox_signalled = more
        for event in batch:
            self._route(event)
        if more:
            await asyncio.sleep(0)
            self.post_message(SessionEventsWaiting())

    def _route(self, event: SessionEvent) -> None:
        """The one place session events change what the app shows: the view model first, then the views."""
        self.view.apply(event)
        transcript = self.query_one(Transcript)
        match event:
            case SessionStarted():
                self.project = Project(self.task_path or Path(event.task_path), event.session_id)
                self.sub_title = " · ".join([Path(event.task_path).name, event.model, event.device])
                self.query_one("#steer", Input).display = not self.view.manual
                if self.view.manual and not self.read_only:
                    transcript.add_note(f"manual mode: edit model_new.py and kernels/ in {self.driver.workspace_dir} "
                                        "with your own editor; each save is evaluated here")
            case TokenDelta():
                transcript.add_tokens(event.turn, event.text)
            case LLMTurn():
                transcript.end_turn(event.turn, event.response)
            case ToolCall():
                transcript.add_tool_call(event.call_id, event.name, event.arguments)
            case ToolResult():
                transcript.add_tool_result(event.call_id, event.name, event.output, event.ok)
            case BuildLogLine():
                self.query_one(CompileLog).add_line(event.candidate_id, event.line)
            case Evaluation():
                self._add_candidate(event)
            case PermissionAsked():
                self._ask_permission(event)
            case UserMessage():
                transcript.add_user(event.text)
            case UserDecision():
                self._show_candidates()
            case SessionEnded():
                transcript.add_note(f"session ended: {event.reason}")
                if self.view.best_id is not None:
                    self.query_one(CandidatesTable).select(self.view.best_id)
        if not isinstance(event, (TokenDelta, BuildLogLine)):
            self._show_status()

    def _show_status(self) -> None:
        """The status line (turn and cost, or manual mode's saves; the state), and the footer's bindings, which
        depend on the state. Not the header's subtitle: a new subtitle repaints the whole screen, once a turn."""
        state, status = self.view.state, self.view.status
        if status != self._shown_status:
            self._shown_status = status
            self.query_one("#status", Static).update(status, layout=False)
        if state != self._shown_state:  # every action is asked again whether it applies: only when that changes
            self._shown_state = state
            self.refresh_bindings()

    def _show_candidates(self) -> None:
        view = self.view
        self.query_one(CandidatesTable).show(view.candidates, view.best_id, view.session.marks)

    def _add_candidate(self, event: Evaluation) -> None:
        self._show_candidates()
        result = event.result
        if result.violations:
            detail = f" ({', '.join(dict.fromkeys(v.check for v in result.violations))})"
        elif result.speedup_vs_compile:
            detail = f", {format_speedup(result.speedup_vs_compile)} vs torch.compile"
        else:
            detail = ""
        self.query_one(Transcript).add_note(f"▸ candidate {event.candidate_id}: {result.status}{detail}")
        self.query_one(TimingView).set_history(
            [(c.result.speedup_vs_compile or 0.0) if c.result.passed else 0.0 for c in self.view.candidates.values()])

    @on(SessionFinished)
    def _on_session_finished(self, message: SessionFinished) -> None:
        """The steering box stays where the user's typing is: disabling it would move the focus, and the
        rest of a sentence would land on the candidates' keys (an `r` in it rejects)."""
        self.view.running = False
        steer = self.query_one("#steer", Input)
        steer.placeholder = READ_ONLY_PLACEHOLDER if self.read_only else ENDED_PLACEHOLDER
        if steer.has_focus or steer.value:
            self.notify("the agent takes no more messages; what you type stays in the steering box",
                        title="session ended")
        if message.error:
            self.query_one(Transcript).add_note(f"session failed: {message.error}")
            self.notify(message.error, title="session failed", severity="error")
        self._show_status()

    def _ask_permission(self, event: PermissionAsked) -> None:
        def answer(choice: str | None) -> None:
            choice = choice or "deny"
            try:
                self.driver.answer_permission(event.request_id, choice)
            except KernelpilotError as error:  # the session stopped meanwhile
                self.notify(str(error), severity="warning")
                return
            self.query_one(Transcript).add_note(f"shell `{event.command}`: {choice}")

        self.push_screen(PermissionScreen(event.command), answer)

    # Review: the selected candidate's files, diffs, correctness and timings.

    @on(CandidatesTable.Highlighted)
    def _on_candidate_highlighted(self, message: CandidatesTable.Highlighted) -> None:
        view = self.view
        view.selected = message.candidate_id
        chosen, previous, best = view.chosen, view.previous_of(message.candidate_id), view.session.best
        result = chosen.result
        self.query_one(CorrectnessView).show(result)
        self.query_one(TimingView).show(result)
        if result.build_log:
            self.query_one(CompileLog).show(chosen.candidate_id, result.build_log)
        self.load_candidate(chosen.candidate_id, chosen.commit, previous.commit if previous else None,
                            best.commit if best else None)
        self.refresh_bindings()

    @work(thread=True, exclusive=True, exit_on_error=False, group="inspect")
    def load_candidate(self, candidate_id: int, commit: str, previous: str | None, best: str | None) -> None:
        files_at = self.driver.files_at
        self.post_message(CandidateLoaded(candidate_id, files_at(commit), files_at(previous) if previous else {},
                                          files_at(best) if best else {}))

    @on(CandidateLoaded)
    def _on_candidate_loaded(self, message: CandidateLoaded) -> None:
        if message.candidate_id != self.view.selected:
            return
        self.loaded = message
        self._show_diff()
        self.query_one(KernelView).show(message.files)
        self.refresh_bindings()

    def _show_diff(self) -> None:
        if self.loaded is None:
            return
        accepted = self.project.accepted_files if self.project else {}
        self.query_one(DiffView).show(self.loaded.files,
                                      {"accepted": accepted, "previous": self.loaded.previous, "best": self.loaded.best})

    @on(CompileLog.SourceClicked)
    def _on_source_clicked(self, message: CompileLog.SourceClicked) -> None:
        """Jump from a build error's file:line to that line in the kernel view."""
        if self.query_one(KernelView).show_location(message.path, message.line):
            self.action_show_view("kernel")
        else:
            self.notify(f"{message.path} is not among the selected candidate's files", severity="warning")

    @on(Worker.StateChanged)
    def _on_worker_failed(self, event: Worker.StateChanged) -> None:
        """Every worker's failure ends here (the app's and its widgets': the message bubbles up), said in one
        notification: ours in their own words, anything else with its type. The session goes on."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        said = str(error) if isinstance(error, KernelpilotError) else f"{type(error).__name__}: {error}"
        name = event.worker.name.removeprefix("action_").replace("_", " ")
        self.notify(said, title=f"{name} failed", severity="error")

    # Actions.

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own, less its Quit: the palette already offers this app's (the same action)."""
        return (command for command in super().get_system_commands(screen) if command.title != "Quit")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """None greys an action out in the footer (and drops it from the palette); False hides it."""
        view = self.view
        if (self.read_only and action in LIVE_ACTIONS) or (view.manual and action in AGENT_ACTIONS):
            return False
        match action:
            case "accept":
                loaded = self.loaded is not None and view.chosen is not None \
                    and self.loaded.candidate_id == view.selected
                return loaded and view.chosen.result.passed or None
            case "reject" | "cycle_diff_base":
                return view.chosen is not None or None
            case "undo":
                return bool(self.project and self.project.history) or None
            case "pause" | "stop" | "focus_steer":
                return view.running
            case "edit":
                return (view.running or None) if view.manual else False
            case "steer_ended":
                return not view.running
        return True

    def action_accept(self) -> None:
        diff = self.query_one(DiffView)
        chosen = sorted(diff.chosen) if diff.base == "accepted" else []
        candidate = self.view.chosen
        self.accept(candidate.candidate_id, self.loaded.files, candidate.result, chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="project")
    def accept(self, candidate_id: int, files: dict[str, str], result: Any, chosen: list[str]) -> None:
        done = self.project.accept(candidate_id, files, result, self.accept_form, chosen)
        written = sorted(str(path) for path, _ in done.previous.items() if path.exists())
        self.driver.record_decision("accept", candidate_id, {"form": self.accept_form, "hunks": list(chosen),
                                                             "files": written, "commit": done.commit,
                                                             "branch": done.branch, "evaluated": done.evaluated})
        self.call_from_thread(self._accepted, candidate_id, done, written)

    def _accepted(self, candidate_id: int, done: Acceptance, written: list[str]) -> None:
        """The accept's decision, recorded, marks the candidate (through `_route`); here the user is told where."""
        what = "" if done.evaluated else " (chosen hunks: not evaluated)"
        where = (f"; committed {done.commit[:8]} on branch {done.branch}, your checked-out branch is unchanged"
                 if done.commit else "")
        self.notify(f"wrote {_where_written(written, self.project.task_path.parent)} next to "
                    f"{self.project.task_path.name}{what}{where}", title=f"accepted candidate {candidate_id}")
        self._show_diff()
        self.refresh_bindings()

    def action_reject(self) -> None:
        """A toggle: a stray `r` (a word typed with the candidates focused) is taken back with another."""
        rejected = self.view.session.marks.get(self.view.selected) == REJECTED
        self.record_decision("unreject" if rejected else "reject", self.view.selected)

    @work(thread=True, exit_on_error=False, group="decisions")
    def record_decision(self, decision: str, candidate_id: int | None) -> None:
        self.driver.record_decision(decision, candidate_id, {})

    @work(thread=True, exclusive=True, exit_on_error=False, group="project")
    def action_undo(self) -> None:
        undone = self.project.undo()
        self.driver.record_decision("undo", undone.candidate_id, {"commit": undone.commit})
        self.call_from_thread(self._undone, undone.candidate_id)

    def _undone(self, candidate_id: int | None) -> None:
        self.notify(f"undid the accept of candidate {candidate_id}")
        self._show_diff()
        self.refresh_bindings()

    def action_toggle_form(self) -> None:
        self.accept_form = FORMS[(FORMS.index(self.accept_form) + 1) % len(FORMS)]
        save_state(accept_form=self.accept_form)
        self.notify(f"accept writes the {'single-file' if self.accept_form == 'single' else 'workspace'} form")

    def action_cycle_diff_base(self) -> None:
        self.query_one(DiffView).cycle_base()
        self.action_show_view("diff")

    def action_show_view(self, view: str) -> None:
        """The diff takes the focus as it is shown: its keys (up/down between hunks, space to choose one)
        work at once; escape goes back to the candidates."""
        self.query_one(TabbedContent).active = f"tab-{view}"
        if view == "diff":
            self.query_one("#hunks").focus()

    def action_edit(self) -> None:
        """The app steps aside for the editor and comes back when it exits; each save is evaluated meanwhile, as
        from an editor in another terminal."""
        workspace = self.driver.workspace_dir
        command = editor_command(workspace)
        try:
            with self.suspend():
                subprocess.run(command, cwd=workspace, check=False)
        except SuspendNotSupported:
            self.notify(f"this terminal cannot hand over to an editor: in {workspace}, run {shlex.join(command)}",
                        title="edit")
        except OSError as error:
            self.notify(f"{command[0]}: {error.strerror} (set $VISUAL or $EDITOR)", title="edit failed",
                        severity="error")

    @on(SteerInput.Left)
    def action_focus_candidates(self) -> None:
        self.query_one(CandidatesTable).focus()

    def action_focus_steer(self) -> None:
        self.query_one("#steer", Input).focus()

    def action_steer_ended(self) -> None:
        self.query_one("#steer", Input).focus()
        self.notify("the agent takes no more messages", title="session ended")

    @on(Input.Submitted, "#steer")
    def _on_steer(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or self.read_only:
            return
        if not self.view.running:
            self.notify("the session has ended: nothing was sent", title="not sent", severity="warning")
            return
        event.input.clear()
        self.driver.steer(text)
        self.query_one(Transcript).add_user(text, pending=True)

    def action_pause(self) -> None:
        if self.view.paused:
            self.driver.resume()
        else:
            self.driver.pause()
        self.view.paused = not self.view.paused
        self._show_status()

    def action_stop(self) -> None:
        self.driver.stop()
        self.query_one(Transcript).add_note("stopping after the current step…")

    async def action_quit(self) -> None:
        if self.view.running and self.driver is not None:
            self.driver.stop()
        self.exit(0)


def _where_written(paths: list[str], folder: Path) -> str:
    """What an accept wrote, as the user finds it next to their model: `model_new.py`, or
    `model_kernelpilot/ (2 files)`."""
    tops = sorted({Path(path).relative_to(folder).parts[0] + ("/" if Path(path).parent != folder else "")
                   for path in paths})
    count = f" ({len(paths)} files)" if len(paths) > len(tops) else ""
    return ", ".join(tops) + count if tops else "nothing"


def _run_app(open_session: Callable[[Callable[[SessionEvent], None]], SessionDriver], read_only: bool) -> int:
    """Open the session before the screen does, so that a user error is one line on the terminal,
    not a crash inside the app; its events reach the app once it runs."""
    app: KernelpilotApp | None = None
    ended: list[str] = []

    def deliver(event: SessionEvent) -> None:
        if isinstance(event, SessionEnded):
            ended.append(event.reason)
        app._deliver(event)

    driver = open_session(deliver)
    app = KernelpilotApp(lambda deliver: driver, read_only=read_only)
    app.run()
    mid_step = not read_only and not app.session_done.wait(QUIT_GRACE_S)
    sys.stdout.write(resume_hint(driver.session_id, mid_step, finished=ended[-1:] == [FINISHED]))
    return app.return_code or 0


def resume_hint(session_id: str, mid_step: bool, finished: bool = False) -> str:
    """Printed as the app exits: the session's id is what every way back to it takes. A finished session
    (the agent said done) is not offered `--resume`, which would only print its summary."""
    if finished:
        return (f"kernelpilot: session {session_id} finished\n"
                f"  kernelpilot sessions show {session_id}   reviews it\n"
                f"  kernelpilot sessions export {session_id}   writes its best candidate\n")
    return (f"kernelpilot: session {session_id} {'left mid-step' if mid_step else 'saved'}\n"
            f"  kernelpilot optimize --resume {session_id}   continues it\n"
            f"  kernelpilot sessions show {session_id}   reviews it\n")


def run_optimize_app(settings: Any) -> int:
    """`kernelpilot optimize` on a terminal: a live session."""
    from kernelpilot.agent.controller import SessionController

    return _run_app(lambda on_event: SessionController(settings, on_event), read_only=False)


def run_session_app(session_ref: str, sessions_root: Path) -> int:
    """`kernelpilot sessions show ID` on a terminal: a finished session, read-only."""
    from kernelpilot.agent.controller import SessionController

    return _run_app(lambda on_event: SessionController.open(session_ref, on_event, sessions_root), read_only=True)
