"""`SessionController`: runs one session — the agent loop, or manual mode — and reports every step.

The TUI and `kernelpilot optimize --headless` both drive a session through this class:

    controller = SessionController(settings, on_event)    # validates, creates or reopens the workspace
    summary = controller.run()                             # blocking; call it from a worker thread
    controller.steer("try vectorised loads")               # thread-safe, joins before the next LLM turn
    controller.pause(); controller.resume(); controller.stop()
    controller.answer_permission(request_id, "once" | "always" | "deny")
    controller.candidates(); controller.best(); controller.diff(old, new); controller.files_at(commit)
    controller.record_decision("accept", candidate_id, {...})

`on_event` receives every `SessionEvent` (from the session's thread, and from whichever thread
records a decision); persisted events are in the log before `on_event` sees them. A finished
session opens read-only with `SessionController.open(id_or_dir)`: its `run()` replays the log
through `on_event`, and candidates / diff / files_at work without running anything.

Budgets (`max_turns`, `budget_usd`) count over the whole session, across `--resume`; `max_minutes`
counts from this `run()`. A resumed session first finishes the turn a kill (or a stop) cut short; one that
ended with the agent's `done` runs nothing more.
"""

from __future__ import annotations

import queue
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
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
from kernelpilot.agent.tools import TOOL_SPECS, FileTools, ToolError, call_file_tool, parse_arguments
from kernelpilot.errors import KernelpilotError, SessionError, UsageError
from kernelpilot.harness import EvalOptions, PreparedJudge, evaluate, prepare_judge
from kernelpilot.harness.protocol import DEFAULT_POLICY
from kernelpilot.harness.task import check_task_file, sha256_file
from kernelpilot.session.contexts import TurnContexts
from kernelpilot.session.events import (
    MANUAL_MODEL,
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
from kernelpilot.session.log import SessionLog
from kernelpilot.session.store import (
    DEFAULT_ROOT,
    FINISHED,
    LOG_NAME,
    WORKSPACE_NAME,
    CandidateRecord,
    SessionRecord,
    best_of,
    candidate_dir,
    locate,
    new_session_id,
)
from kernelpilot.session.workspace import MODEL_FILE, TASK_FILE, Workspace

FILE_TOOLS = ("read", "write", "edit", "list", "grep")
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


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    session_dir: Path
    reason: str
    turns: int
    cost_usd: float
    prompt_tokens: int
    completion_tokens: int
    candidates: tuple[CandidateRecord, ...]
    best: CandidateRecord | None

    def to_json(self) -> dict[str, Any]:
        def brief(record: CandidateRecord) -> dict[str, Any]:
            r = record.result
            return {"candidate_id": record.candidate_id, "commit": record.commit, "status": r.status,
                    "reward": r.reward, "speedup_vs_eager": r.speedup_vs_eager,
                    "speedup_vs_compile": r.speedup_vs_compile}

        return {"session_id": self.session_id, "session_dir": str(self.session_dir), "reason": self.reason,
                "turns": self.turns, "cost_usd": self.cost_usd, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "candidates": [brief(c) for c in self.candidates],
                "best": brief(self.best) if self.best else None}


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class SessionController:
    """Runs one session (agent loop or manual mode) and reports SessionEvents through on_event."""

    def __init__(self, settings: SessionSettings, on_event: Callable[[SessionEvent], None]) -> None:
        self.settings = settings
        self._on_event = on_event
        self._stop = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._steering: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._permissions: dict[str, tuple[threading.Event, list[str]]] = {}
        self._lock = threading.Lock()
        self._shell = settings.shell
        self._done = False
        self._history: list[SessionEvent] = []
        self._next_judge: PreparedJudge | None = None
        """The next evaluation's judge, prepared ahead: its worker starts and makes the references while the
        agent (or the user) works."""
        self._ended: SessionEnded | None = None
        """How the session last ended (a resumed one)."""
        if settings.resume or settings.read_only:
            self._reopen(settings)
        else:
            self._create(settings)
        self.workspace_dir = self.session_dir / WORKSPACE_NAME
        self.log_path = self.session_dir / LOG_NAME
        self._candidates: list[CandidateRecord] = [
            CandidateRecord(e.candidate_id, e.commit, e.result) for e in self._history if isinstance(e, Evaluation)]
        self._turns = sum(isinstance(e, LLMTurn) for e in self._history)
        self._cost = sum(e.cost_usd for e in self._history if isinstance(e, LLMTurn))
        self._tokens = [sum(e.prompt_tokens for e in self._history if isinstance(e, LLMTurn)),
                        sum(e.completion_tokens for e in self._history if isinstance(e, LLMTurn))]
        self._files = FileTools(self.workspace_dir, protected=(TASK_FILE,))
        self._tools = self._tool_handlers()
        self._log = None if settings.read_only else SessionLog(self.log_path)

    def _create(self, settings: SessionSettings) -> None:
        if settings.task_path is None:
            raise UsageError("no task file given (kernelpilot optimize MODEL.py)")
        task = Path(settings.task_path)
        check_task_file(task)
        self.device = settings.device or default_device()
        self.policy = settings.policy
        self._skill_ref = settings.skill or self.device
        self.model = settings.model
        self._client = make_client(self.model, dict(settings.sampling), settings.llm_options,
                                   settings.tool_protocol) if self.model else None
        skill = find_skill(self._skill_ref)
        self._skill_ref = skill.name if self._skill_ref == skill.name else str(skill.path)
        self._skill = skill
        self._check_manual_can_end()
        self._next_judge = prepare_judge(task, self._eval_options())  # the first candidate's, checked now
        try:
            self._next_judge.check_task()
        except BaseException:
            self._next_judge.discard()
            raise
        self.session_id = new_session_id()
        self.session_dir = Path(settings.sessions_root) / self.session_id
        self.task_sha256 = sha256_file(task)
        source = task.read_text()
        starter = {} if self._client else {MODEL_FILE: starter_model(source)}
        self._workspace = Workspace.create(self.session_dir / WORKSPACE_NAME, task, starter)
        _ignore_sessions_folder(Path(settings.sessions_root))
        self._task_path = task.resolve()
        self._opening = opening_messages(skill, source, self.device, self.policy,
                                         self._client is None or self._client.native_tools)

    def _reopen(self, settings: SessionSettings) -> None:
        record = SessionRecord(locate(settings.resume, Path(settings.sessions_root)))
        started = record.started
        self._history = list(record.events)
        self._ended = record.ended
        self.session_id = started.session_id
        self.session_dir = record.directory
        self.device, self.policy, self._skill_ref = started.device, started.policy, started.skill
        self.task_sha256 = started.task_sha256
        self._task_path = Path(started.task_path)
        self._workspace = record.workspace
        self.model = settings.model or (None if started.model == MANUAL_MODEL else started.model)
        self._client = None
        if not settings.read_only and self.device == "cuda" and default_device() != "cuda":
            raise UsageError(f"session {self.session_id} ran on cuda, and torch sees no GPU here")
        if not settings.read_only and self.model:
            self._client = make_client(self.model, dict(settings.sampling) or dict(started.sampling),
                                       settings.llm_options, settings.tool_protocol)
            if isinstance(self._client, ReplayClient):
                self._client.position = sum(isinstance(e, LLMTurn) for e in self._history)
        if not settings.read_only:
            self._check_manual_can_end()
        self._skill = find_skill(self._skill_ref) if not settings.read_only else None
        task_source = self._workspace.task_copy.read_text()
        native = self._client is None or self._client.native_tools
        self._opening = opening_messages(self._skill, task_source, self.device, self.policy, native) \
            if self._skill else []

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
        self._require_live()
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

    def candidates(self) -> list[CandidateRecord]:
        with self._lock:
            return list(self._candidates)

    def best(self) -> CandidateRecord | None:
        return best_of(self.candidates())

    def diff(self, old_commit: str | None, new_commit: str) -> str:
        return self._workspace.diff(old_commit, new_commit)

    def files_at(self, commit: str) -> dict[str, str]:
        return self._workspace.files_at(commit)

    def record_decision(self, decision: str, candidate_id: int | None, detail: dict) -> None:
        self._require_live()
        self._emit(UserDecision(decision=decision, candidate_id=candidate_id, detail=dict(detail)))

    # ----- running

    def run(self) -> SessionSummary:
        """Blocking. Returns when the agent is done, a budget ends, `stop()` is called or (manual) on interrupt."""
        for event in self._history:
            self._on_event(event)
        if self.settings.read_only or (self._ended and self._ended.reason == FINISHED):
            return self._summary(self._ended.reason if self._ended else "unfinished")
        if not self._history:
            self._emit(SessionStarted(
                session_id=self.session_id, task_path=str(self._task_path), task_sha256=self.task_sha256,
                skill=self._skill_ref, model=self.model or MANUAL_MODEL,
                sampling=dict(self._client.sampling) if self._client else {}, device=self.device, policy=self.policy))
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
            best = self.best()
            self._emit(SessionEnded(reason=reason, best_candidate_id=best.candidate_id if best else None,
                                    turns=self._turns, cost_usd=self._cost))
        return self._summary(reason)

    def _agent_loop(self) -> str:
        contexts = TurnContexts()
        conversation = Conversation.rebuild(self._opening, self._history, self._calls_of, contexts)
        self._finish_interrupted_turn(conversation)
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
            turn = self._turns + 1
            try:
                reply = self._client.complete(messages, tools,
                                              lambda text: self._emit(TokenDelta(turn=turn, text=text)))
            except ReplayExhausted:
                return "transcript_end"
            except Exception as error:  # litellm has retried; auth, quota and network errors end the session
                return f"llm_error: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            self._turns = turn
            self._cost += reply.cost_usd
            self._tokens[0] += reply.prompt_tokens
            self._tokens[1] += reply.completion_tokens
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

    def _finish_interrupted_turn(self, conversation: Conversation) -> None:
        """Answer the last turn's tool calls that have no result yet (a kill or a stop came first).

        An interrupted evaluation runs again: it judges a commit, so a second run is harmless, and the
        candidate the workspace already holds gets its verdict. Another interrupted call may have half
        happened, so it is reported as interrupted; calls that never began run now.
        """
        last = next((e for e in reversed(self._history) if isinstance(e, LLMTurn)), None)
        if last is None:
            return
        begun = {e.call_id for e in self._history if isinstance(e, ToolCall) and e.turn == last.turn}
        answered = {e.call_id for e in self._history if isinstance(e, ToolResult) and e.turn == last.turn}
        for call in self._calls_of(last.response, last.turn):
            name = call["function"]["name"]
            if call["id"] in answered or self._stop.is_set():
                continue
            if call["id"] not in begun:
                output, _ = self._run_tool(last.turn, call)
            elif name == "evaluate":
                output, _ = self._tool_result(last.turn, call, *self._call_tool(name, {}))
            else:
                output, _ = self._tool_result(last.turn, call, INTERRUPTED, False)
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
        if self._turns >= settings.max_turns:
            return "max_turns"
        if settings.budget_usd is not None and self._cost >= settings.budget_usd:
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
            return self._tool_result(turn, call, str(error), False, error.invalid_call)
        self._emit(ToolCall(turn=turn, call_id=call["id"], name=name, arguments=arguments))
        return self._tool_result(turn, call, *self._call_tool(name, arguments))

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool, bool]:
        """The tool's output, whether it succeeded, and whether the call itself was invalid (`ToolError`)."""
        handler = self._tools.get(name)
        try:
            if handler is None:
                raise ToolError(f"unknown tool '{name}' (have: {', '.join(s.name for s in TOOL_SPECS)})")
            output, ok = handler(arguments)
        except ToolError as error:
            return str(error), False, error.invalid_call
        return output, ok, False

    def _tool_handlers(self) -> dict[str, Callable[[dict[str, Any]], tuple[str, bool]]]:
        """What each tool of TOOL_SPECS does, by name: the model sees the specs, the loop dispatches here."""
        handlers: dict[str, Callable[[dict[str, Any]], tuple[str, bool]]] = {
            name: partial(self._file_tool, name) for name in FILE_TOOLS}
        handlers |= {"evaluate": self._evaluate_tool, "shell": self._shell_tool, "done": self._done_tool}
        assert set(handlers) == {spec.name for spec in TOOL_SPECS}, "a tool without its spec, or a spec without its tool"
        return handlers

    def _file_tool(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        return call_file_tool(self._files, name, arguments), True

    def _evaluate_tool(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        record = self._evaluate_candidate()
        return describe_result(record.candidate_id, record.result), True

    def _shell_tool(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        return self._run_shell(str(arguments.get("command", "")))

    def _done_tool(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        self._done = True
        return "session ends; the best correct candidate is its result", True

    def _tool_result(self, turn: int, call: dict[str, Any], output: str, ok: bool,
                     invalid_call: bool = False) -> tuple[str, bool]:
        self._emit(ToolResult(turn=turn, call_id=call["id"], name=call["function"]["name"], output=output, ok=ok,
                              invalid_call=invalid_call))
        return output, ok

    def _run_shell(self, command: str) -> tuple[str, bool]:
        decision = self._shell.decide(command)
        if decision == "ask":
            decision = self._ask_permission(command)
        if decision != "allow":
            raise ToolError(f"denied by the shell policy, not run: {command}", invalid_call=False)
        return run_shell(command, self.workspace_dir, protected=[self.workspace_dir / TASK_FILE])

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
        return EvalOptions(device=self.device, policy=self.policy, ncu=self.settings.ncu)

    def _prepare_next_judge(self) -> None:
        """A task the judge cannot use is reported by the evaluation that needs it, not here."""
        try:
            self._next_judge = prepare_judge(self._workspace.task_copy, self._eval_options())
        except KernelpilotError:
            self._next_judge = None

    def _evaluate_candidate(self) -> CandidateRecord:
        """Commit the workspace as the next candidate, evaluate exactly that commit, attach the result."""
        if not (self.workspace_dir / MODEL_FILE).is_file():
            raise ToolError(f"no {MODEL_FILE} yet: write it (and kernels/) first")
        if not self._workspace.task_intact(self.task_sha256):
            raise ToolError(f"{TASK_FILE} no longer matches the task this session started with; not evaluated")
        with self._lock:
            candidate_id = len(self._candidates) + 1
            if self._unevaluated_head():
                commit = self._workspace.head_sha()
            else:
                commit = self._workspace.snapshot(f"candidate {candidate_id}")
        folder = candidate_dir(self.session_dir, candidate_id)
        shutil.rmtree(folder, ignore_errors=True)  # left by an evaluation a kill interrupted
        self._workspace.export(commit, folder)
        options = self._eval_options()
        prepared, self._next_judge = self._next_judge, None
        try:
            result = evaluate(self._workspace.task_copy, folder, options, prepared=prepared,
                              on_log=lambda line: self._emit(BuildLogLine(candidate_id=candidate_id, line=line)))
        except KernelpilotError as error:
            raise ToolError(f"not evaluated: {error}", invalid_call=False) from None
        finally:
            self._prepare_next_judge()
        self._workspace.attach_result(commit, result)
        record = CandidateRecord(candidate_id, commit, result)
        with self._lock:
            self._candidates.append(record)
        self._emit(Evaluation(candidate_id=candidate_id, commit=commit, result=result))
        return record

    def _unevaluated_head(self) -> bool:
        """The workspace's last commit is the next candidate's, which a kill kept from its verdict, and nothing
        changed since: it is evaluated as it is, not committed twice."""
        return (self._workspace.head_message().strip() == f"candidate {len(self._candidates) + 1}"
                and not self._workspace.repo.is_dirty(untracked_files=True))

    def _manual_loop(self) -> str:
        started = time.monotonic()
        if self._unevaluated_head():
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
        self._log.append(event)
        self._on_event(event)

    def _require_live(self) -> None:
        if self.settings.read_only:
            raise SessionError(f"session {self.session_id} is open read-only")

    def _summary(self, reason: str) -> SessionSummary:
        return SessionSummary(self.session_id, self.session_dir, reason, self._turns, self._cost,
                              self._tokens[0], self._tokens[1], tuple(self.candidates()), self.best())


def _ignore_sessions_folder(root: Path) -> None:
    """Keep `.kernelpilot/` out of the user's own git repository."""
    marker = root.parent / ".gitignore"
    if root.parent.name == ".kernelpilot" and not marker.exists():
        marker.write_text("*\n")
