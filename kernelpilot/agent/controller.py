"""`SessionController`: runs one session — the agent loop, or manual mode — and reports every step.

The TUI and `kernelpilot optimize --headless` both drive a session through this class:

    controller = SessionController(settings, on_event)    # validates, creates or reopens the workspace
    summary = controller.run()                             # blocking; call it from a worker thread
    controller.steer("try vectorised loads")               # thread-safe, joins before the next LLM turn
    controller.pause(); controller.resume(); controller.stop()
    controller.answer_permission(request_id, "once" | "always" | "deny")
    controller.session     # the `session.Session`: candidates, best, diffs, files, decisions, the log

The controller keeps the loop (turns, tools, evaluations, permissions, pause and stop); the session's state
is its `Session`'s. `on_event` receives every `SessionEvent` (from the session's thread, and from whichever
thread records a decision); persisted events are in the log before `on_event` sees them. A finished
session opens read-only with `SessionController.open(id_or_dir)`: its `run()` replays the log
through `on_event`, and the session's candidates / diff / files_at work without running anything.

Budgets (`max_turns`, `budget_usd`) count over the whole session, across `--resume`; `max_minutes`
counts from this `run()`. A resumed session first finishes the turn a kill (or a stop) cut short; one that
ended with the agent's `done` runs nothing more.
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernelpilot.agent.conversation import INTERRUPTED, Conversation
from kernelpilot.agent.feedback import describe_result
from kernelpilot.agent.llm import ReplayClient, ReplayExhausted, make_client
from kernelpilot.agent.manual import SaveWatcher, starter_model
from kernelpilot.agent.prompt import opening_messages
from kernelpilot.agent.shell import ShellPolicy, run_shell
from kernelpilot.agent.skills import find_skill
from kernelpilot.agent.textproto import parse_tool_calls
from kernelpilot.agent.tools import TOOL_SPECS, FileTools, ToolError, ToolOutcome, call_tool, parse_arguments
from kernelpilot.errors import KernelpilotError, SessionError, UsageError
from kernelpilot.harness import EvalOptions, PreparedJudge, evaluate, prepare_judge
from kernelpilot.harness.keeper_process import KeeperFailure
from kernelpilot.harness.protocol import DEFAULT_POLICY
from kernelpilot.harness.task_files import check_task_file
from kernelpilot.session.contexts import TurnContexts
from kernelpilot.session.events import (
    MANUAL_MODEL,
    BuildLogLine,
    LLMTurn,
    PermissionAsked,
    SessionEnded,
    SessionEvent,
    TokenDelta,
    ToolCall,
    ToolResult,
    UserDecision,
    UserMessage,
)
from kernelpilot.session.session import Session, SessionSummary
from kernelpilot.session.state import CandidateRecord
from kernelpilot.session.store import DEFAULT_ROOT, FINISHED
from kernelpilot.session.workspace import MODEL_FILE, TASK_FILE

PERMISSION_ANSWERS = ("once", "always", "deny")
POLL_S = 0.1


@dataclass(frozen=True)
class SessionSettings:
    """Everything a session is started with (the CLI builds it from config files, env and flags).

    `model` None means manual mode. `skill` None means the device's skill (`cuda` or `cpu`).
    `device` None means cuda when torch sees a GPU, else cpu. With `resume`, the task, skill and
    device come from the session's log and `model` may be changed. `sampling` (temperature, top_p,
    max_tokens) and `llm_options` (api_base, …) go to litellm.
    """

    task_path: Path | None = None
    model: str | None = None
    skill: str | None = None
    device: str | None = None
    policy: str = DEFAULT_POLICY
    max_turns: int = 50
    budget_usd: float | None = None
    max_minutes: float | None = None
    shell: ShellPolicy = ShellPolicy()
    sessions_root: Path = DEFAULT_ROOT
    resume: str | None = None
    read_only: bool = False
    sampling: Mapping[str, Any] = field(default_factory=dict)
    llm_options: Mapping[str, Any] = field(default_factory=dict)
    tool_protocol: str = "auto"
    """auto | native | text (fenced JSON tool calls, for models without native tool calling)."""
    ncu: bool = True
    """Nsight Compute counters for passing candidates on CUDA, when ncu is on PATH (the timing view shows them)."""
    unattended: bool = False
    """No person can stop the session (headless, no terminal): manual mode then needs `max_minutes` to end."""


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class SessionController:
    """Runs one session (agent loop or manual mode) and reports SessionEvents through on_event."""

    def __init__(self, settings: SessionSettings, on_event: Callable[[SessionEvent], None]) -> None:
        self.settings = settings
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._steering: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._permissions: dict[str, tuple[threading.Event, list[str]]] = {}
        self._shell = settings.shell
        self._done = False
        self._next_judge: PreparedJudge | None = None
        """The next evaluation's judge, prepared ahead: its worker starts and makes the references while the
        agent (or the user) works."""
        self.session = self._reopen(settings, on_event) if settings.resume or settings.read_only \
            else self._create(settings, on_event)
        self.files = FileTools(self.session.workspace_dir, protected=(TASK_FILE,))

    def _create(self, settings: SessionSettings, on_event: Callable[[SessionEvent], None]) -> Session:
        if settings.task_path is None:
            raise UsageError("no task file given (kernelpilot optimize MODEL.py)")
        task = Path(settings.task_path)
        check_task_file(task.resolve())  # a path in an error is absolute, as `eval` names it
        device = settings.device or default_device()
        skill_ref = settings.skill or device
        self.model = settings.model
        self._client = make_client(self.model, dict(settings.sampling), settings.llm_options,
                                   settings.tool_protocol) if self.model else None
        skill = find_skill(skill_ref)
        self._check_manual_can_end()
        self._next_judge = prepare_judge(task, EvalOptions(device=device, policy=settings.policy, ncu=settings.ncu))
        try:
            self._next_judge.check_task()  # the first candidate's judge, checked now
        except BaseException:
            self._next_judge.discard()
            raise
        source = task.read_text()
        session = Session.create(
            Path(settings.sessions_root), task, skill=skill.name if skill_ref == skill.name else str(skill.path),
            model=self.model or MANUAL_MODEL, sampling=self._client.sampling if self._client else {}, device=device,
            policy=settings.policy, starter={} if self._client else {MODEL_FILE: starter_model(source)},
            on_event=on_event)
        self._opening = opening_messages(skill, source, device, settings.policy,
                                         self._client is None or self._client.native_tools)
        return session

    def _reopen(self, settings: SessionSettings, on_event: Callable[[SessionEvent], None]) -> Session:
        session = Session.open(settings.resume, Path(settings.sessions_root), read_only=settings.read_only,
                               on_event=on_event)
        started = session.started
        self.model = settings.model or (None if started.model == MANUAL_MODEL else started.model)
        self._client = None
        self._opening = []
        if settings.read_only or (session.ended and session.ended.reason == FINISHED):
            return session  # `run()` only gives back its summary: no client, no key, no GPU asked for
        if started.device == "cuda" and default_device() != "cuda":
            raise UsageError(f"session {session.session_id} ran on cuda, and torch sees no GPU here")
        if self.model:
            self._client = make_client(self.model, dict(settings.sampling) or dict(started.sampling),
                                       settings.llm_options, settings.tool_protocol)
            if isinstance(self._client, ReplayClient):
                self._client.position = session.usage.turns
        self._check_manual_can_end()
        native = self._client is None or self._client.native_tools
        self._opening = opening_messages(find_skill(started.skill), session.workspace.task_copy.read_text(),
                                         started.device, started.policy, native)
        return session

    def _check_manual_can_end(self) -> None:
        """Manual mode ends on `stop()` (Ctrl-C) or `max_minutes`: unattended, without a time limit, it would wait
        forever for saves nobody makes."""
        if self.model is None and self.settings.unattended and self.settings.max_minutes is None:
            raise UsageError("no model and no terminal: manual mode would wait for saves forever (give --model, "
                             "or --max-minutes to watch the workspace for a while)")

    @classmethod
    def open(cls, ref: str | Path, on_event: Callable[[SessionEvent], None] = lambda event: None,
             sessions_root: Path = DEFAULT_ROOT) -> SessionController:
        """A finished (or killed) session, read-only: `run()` replays its log through `on_event`."""
        return cls(SessionSettings(resume=str(ref), sessions_root=sessions_root, read_only=True), on_event)

    # ----- what the UI calls (any thread)

    def steer(self, text: str) -> None:
        if self.session.read_only:
            raise SessionError(f"session {self.session_id} is open read-only")
        self._steering.put(text)

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def stop(self) -> None:
        self._stop.set()
        self._running.set()
        for event, _ in list(self._permissions.values()):
            event.set()

    def answer_permission(self, request_id: str, answer: str) -> None:
        if answer not in PERMISSION_ANSWERS:
            raise UsageError(f"permission answer must be one of {', '.join(PERMISSION_ANSWERS)}")
        waiting = self._permissions.get(request_id)
        if waiting is None:
            raise SessionError(f"no pending permission request {request_id}")
        waiting[1].append(answer)
        waiting[0].set()

    # The session as the TUI's driver sees it (`tui.driver.SessionDriver`).

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def workspace_dir(self) -> Path:
        return self.session.workspace_dir

    def files_at(self, commit: str) -> dict[str, str]:
        return self.session.files_at(commit)

    def record_decision(self, decision: str, candidate_id: int | None, detail: dict) -> None:
        self.session.record_decision(decision, candidate_id, detail)

    # ----- running

    def run(self) -> SessionSummary:
        """Blocking. Returns when the agent is done, a budget ends, `stop()` is called or (manual) on interrupt."""
        session = self.session
        session.replay()
        ended = session.ended
        if session.read_only or (ended and ended.reason == FINISHED):
            return session.summary(ended.reason if ended else "unfinished")
        reason = "interrupted"
        if self._next_judge is None:
            self._prepare_next_judge()
        try:
            reason = self._agent_loop() if self._client else self._manual_loop()
        except Exception as error:
            reason = f"error: {type(error).__name__}: {error}"
            raise
        finally:
            if self._next_judge is not None:
                self._next_judge.discard()
            best, usage = session.best(), session.usage
            self._emit(SessionEnded(reason=reason, best_candidate_id=best.candidate_id if best else None,
                                    turns=usage.turns, cost_usd=usage.cost_usd))
        return session.summary(reason)

    def _agent_loop(self) -> str:
        contexts = TurnContexts()
        history = self.session.events
        conversation = Conversation.rebuild(self._opening, history, self._calls_of, contexts)
        self._finish_interrupted_turn(conversation, history)
        tools = [spec.to_openai() for spec in TOOL_SPECS]
        started = time.monotonic()
        while not self._done:
            if (reason := self._wait_while_paused() or self._budget_spent(started)) is not None:
                return reason
            while not self._steering.empty():
                text = self._steering.get()
                conversation.add_user(text)
                self._emit(UserMessage(text=text))
            messages = conversation.ready_for_model()
            turn = self.session.usage.turns + 1
            try:
                reply = self._client.complete(messages, tools,
                                              lambda text: self._emit(TokenDelta(turn=turn, text=text)))
            except ReplayExhausted:
                return "transcript_end"
            except Exception as error:  # litellm has retried; auth, quota and network errors end the session
                return f"llm_error: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            self._emit(LLMTurn(turn=turn, response=reply.message, **contexts.stored(messages, reply.message),
                               token_ids=reply.token_ids, logprobs=reply.logprobs, prompt_tokens=reply.prompt_tokens,
                               completion_tokens=reply.completion_tokens, cost_usd=reply.cost_usd,
                               model=self.model, sampling=dict(self._client.sampling)))
            calls = self._calls_of(reply.message, turn)
            conversation.add_assistant(reply.message, calls)
            for call in calls:
                if self._stop.is_set():
                    return "stopped"
                output, _ = self._run_tool(turn, call)
                conversation.add_tool_result(call["id"], call["function"]["name"], output)
        return "done"

    def _finish_interrupted_turn(self, conversation: Conversation, history: tuple[SessionEvent, ...]) -> None:
        """Answer the last turn's tool calls that have no result yet (a kill or a stop came first).

        An interrupted evaluation runs again: it judges a commit, so a second run is harmless, and the
        candidate the workspace already holds gets its verdict. Another interrupted call may have half
        happened, so it is reported as interrupted; calls that never began run now.
        """
        last = next((e for e in reversed(history) if isinstance(e, LLMTurn)), None)
        if last is None:
            return
        begun = {e.call_id for e in history if isinstance(e, ToolCall) and e.turn == last.turn}
        answered = {e.call_id for e in history if isinstance(e, ToolResult) and e.turn == last.turn}
        for call in self._calls_of(last.response, last.turn):
            name = call["function"]["name"]
            if call["id"] in answered or self._stop.is_set():
                continue
            if call["id"] not in begun:
                output, _ = self._run_tool(last.turn, call)
            elif name == "evaluate":
                output, _ = self._tool_result(last.turn, call, call_tool(self, name, {}))
            else:
                output, _ = self._tool_result(last.turn, call, ToolOutcome(INTERRUPTED, False))
            conversation.add_tool_result(call["id"], name, output)

    @staticmethod
    def _calls_of(message: dict[str, Any], turn: int) -> list[dict[str, Any]]:
        return message.get("tool_calls") or parse_tool_calls(message.get("content") or "", turn)

    def _wait_while_paused(self) -> str | None:
        while not self._running.wait(POLL_S):
            pass
        return "stopped" if self._stop.is_set() else None

    def _budget_spent(self, started: float) -> str | None:
        settings = self.settings
        usage = self.session.usage
        if usage.turns >= settings.max_turns:
            return "max_turns"
        if settings.budget_usd is not None and usage.cost_usd >= settings.budget_usd:
            return "budget_usd"
        return "wall_time" if self._out_of_time(started) else None

    def _out_of_time(self, started: float) -> bool:
        minutes = self.settings.max_minutes
        return minutes is not None and time.monotonic() - started >= minutes * 60

    def _run_tool(self, turn: int, call: dict[str, Any]) -> tuple[str, bool]:
        name, raw = call["function"]["name"], call["function"].get("arguments")
        try:
            arguments = parse_arguments(raw)
        except ToolError as error:
            self._emit(ToolCall(turn=turn, call_id=call["id"], name=name, arguments={"raw": raw}))
            return self._tool_result(turn, call, ToolOutcome(str(error), False, error.invalid_call))
        self._emit(ToolCall(turn=turn, call_id=call["id"], name=name, arguments=arguments))
        return self._tool_result(turn, call, call_tool(self, name, arguments))

    def _tool_result(self, turn: int, call: dict[str, Any], outcome: ToolOutcome) -> tuple[str, bool]:
        self._emit(ToolResult(turn=turn, call_id=call["id"], name=call["function"]["name"], output=outcome.output,
                              ok=outcome.ok, invalid_call=outcome.invalid_call))
        return outcome.output, outcome.ok

    # ----- what the tools act on (`agent.tools.ToolHost`)

    def evaluate(self) -> str:
        record = self._evaluate_candidate()
        return describe_result(record.candidate_id, record.result)

    def run_shell(self, command: str) -> tuple[str, bool]:
        decision = self._shell.decide(command)
        if decision == "ask":
            decision = self._ask_permission(command)
        if decision != "allow":
            raise ToolError(f"denied by the shell policy, not run: {command}", invalid_call=False)
        return run_shell(command, self.workspace_dir, protected=[self.workspace_dir / TASK_FILE])

    def finish(self) -> str:
        self._done = True
        return "session ends; the best correct candidate is its result"

    def _ask_permission(self, command: str) -> str:
        request_id = uuid.uuid4().hex[:8]
        answered, answers = threading.Event(), []
        self._permissions[request_id] = (answered, answers)
        self._emit(PermissionAsked(request_id=request_id, command=command))
        try:
            while not answered.wait(POLL_S):
                pass
        finally:
            del self._permissions[request_id]
        answer = answers[0] if answers else "deny"
        self._emit(UserDecision(decision="permission", detail={"request_id": request_id, "command": command,
                                                              "answer": answer}))
        if answer == "always":
            self._shell = self._shell.allowing(command)
        return "deny" if answer == "deny" else "allow"

    def _eval_options(self) -> EvalOptions:
        started = self.session.started
        return EvalOptions(device=started.device, policy=started.policy, ncu=self.settings.ncu)

    def _prepare_next_judge(self) -> None:
        """A task the judge cannot use is reported by the evaluation that needs it, not here."""
        try:
            self._next_judge = prepare_judge(self.session.workspace.task_copy, self._eval_options())
        except KernelpilotError:
            self._next_judge = None

    def _evaluate_candidate(self) -> CandidateRecord:
        """Commit the workspace as the next candidate, evaluate exactly that commit, attach the result."""
        session = self.session
        if not (self.workspace_dir / MODEL_FILE).is_file():
            raise ToolError(f"no {MODEL_FILE} yet: write it (and kernels/) first")
        if not session.task_intact():
            raise ToolError(f"{TASK_FILE} no longer matches the task this session started with; not evaluated")
        candidate_id, commit = session.next_candidate()
        folder = session.candidate_folder(candidate_id, commit)
        prepared, self._next_judge = self._next_judge, None
        try:
            result = evaluate(session.workspace.task_copy, folder, self._eval_options(), prepared=prepared,
                              on_log=lambda line: self._emit(BuildLogLine(candidate_id=candidate_id, line=line)))
        except (KernelpilotError, KeeperFailure) as error:  # the task, or the judge's own process: not the candidate
            raise ToolError(f"not evaluated: {error}", invalid_call=False) from None
        finally:
            self._prepare_next_judge()
        return session.add_evaluation(candidate_id, commit, result)

    def _manual_loop(self) -> str:
        started = time.monotonic()
        if self.session.has_unevaluated_head():
            self._evaluate_manually()
        with SaveWatcher(self.workspace_dir) as watcher:
            while not self._stop.wait(POLL_S):
                if self._out_of_time(started):
                    return "wall_time"
                if self._running.is_set() and watcher.take_settled_save():
                    self._evaluate_manually()
        return "stopped"

    def _evaluate_manually(self) -> None:
        try:
            self._evaluate_candidate()
        except ToolError as error:
            self._emit(ToolResult(turn=0, call_id=MANUAL_MODEL, name="evaluate", output=str(error), ok=False,
                                  invalid_call=False))

    def _emit(self, event: SessionEvent) -> None:
        self.session.record(event)
