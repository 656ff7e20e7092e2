"""`kernelpilot optimize MODEL.py`: the TUI on a terminal, else headless — rich progress on stderr and
one JSON summary on stdout (exit 0 when the session ran, whatever it found; 3 when it ended on the provider's
error, after litellm's retries: a bad key, a server that is down).

With no model configured (flag, `KERNELPILOT_MODEL` or config) the session runs in manual mode: the
workspace is prepared and every save of `kernels/` or `model_new.py` is evaluated; Ctrl-C (or `--max-minutes`)
ends it, so headless without a terminal it needs `--max-minutes`.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import threading
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from kernelpilot.agent.controller import SessionController, SessionSettings, default_device
from kernelpilot.agent.shell import ShellPolicy
from kernelpilot.config import Config, load_config
from kernelpilot.errors import UsageError
from kernelpilot.harness.result import format_speedup
from kernelpilot.session.events import (
    BuildLogLine,
    Evaluation,
    LLMTurn,
    SessionEnded,
    SessionEvent,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from kernelpilot.session.session import SessionSummary

EXIT_PROVIDER_ERROR = 3


def settings_from(args, headless: bool) -> SessionSettings:
    config = load_config().override(model=args.model, skill=args.skill, device=args.device, policy=args.policy,
                                    max_turns=args.max_turns, budget_usd=args.budget_usd,
                                    max_minutes=args.max_minutes)
    if not args.task and not args.resume:
        raise UsageError("give a task file (kernelpilot optimize MODEL.py) or --resume ID")
    check_budgets(config)
    if config.device == "cuda" and default_device() != "cuda":
        raise UsageError("--device cuda, but torch sees no CUDA device (use --device cpu, or `kernelpilot doctor`)")
    shell_default = "deny" if headless and config.shell_default == "ask" else config.shell_default
    return SessionSettings(
        task_path=Path(args.task) if args.task else None,
        model=config.model,
        skill=config.skill,
        device=config.device,
        policy=config.policy,
        max_turns=config.max_turns,
        budget_usd=config.budget_usd,
        max_minutes=config.max_minutes,
        shell=ShellPolicy(shell_default, config.shell_allow + tuple(args.allow_shell), config.shell_deny),
        sessions_root=Path(config.sessions_root),
        resume=args.resume,
        sampling=config.sampling,
        llm_options={"api_base": config.api_base} if config.api_base else {},
        tool_protocol=config.tool_protocol,
        ncu=config.ncu,
        unattended=headless and not sys.stdin.isatty(),
    )


def check_budgets(config: Config) -> None:
    """A budget that can never end a session sensibly (zero, negative, NaN, infinite) is refused before one starts."""
    if not isinstance(config.max_turns, int) or config.max_turns < 1:
        raise UsageError(f"--max-turns (max_turns) must be a whole number of at least 1, not {config.max_turns!r}")
    for flag, value in (("--budget-usd (budget_usd)", config.budget_usd),
                        ("--max-minutes (max_minutes)", config.max_minutes)):
        if value is not None and not (isinstance(value, (int, float)) and 0 < value < math.inf):
            raise UsageError(f"{flag} must be a positive, finite number, not {value!r}")


class Reporter:
    """Headless progress: a spinner with the current step, and one line per step that matters."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task = progress.add_task("starting", total=None)

    def __call__(self, event: SessionEvent) -> None:
        def say(*objects, **options) -> None:  # one line per step, whatever the width: stderr is often a file or pipe
            self.progress.console.print(*objects, soft_wrap=True, **options)

        if isinstance(event, SessionStarted):
            say(f"session {event.session_id}: {Path(event.task_path).name} · {event.model} · skill {event.skill} · "
                f"{event.device}")
        elif isinstance(event, LLMTurn):
            self._status(f"turn {event.turn}")
        elif isinstance(event, ToolCall):
            detail = event.arguments.get("path") or event.arguments.get("command") or ""
            say(f"  turn {event.turn}  {event.name} {detail}".rstrip(), markup=False, highlight=False)
            self._status(f"turn {event.turn}: {event.name}")
        elif isinstance(event, ToolResult) and not event.ok:
            say(f"    ✗ {event.output.splitlines()[0] if event.output else ''}", markup=False, highlight=False)
        elif isinstance(event, BuildLogLine):
            self._status(f"candidate {event.candidate_id}: {event.line[:80]}")
        elif isinstance(event, Evaluation):
            r = event.result
            speed = (f", {format_speedup(r.speedup_vs_eager)} vs eager, {format_speedup(r.speedup_vs_compile)} vs torch.compile"
                     if r.speedup_vs_eager is not None else "")
            say(f"candidate {event.candidate_id}: {r.status}, reward {r.reward}{speed}", markup=False)
        elif isinstance(event, SessionEnded):
            say(f"session ended: {event.reason}", markup=False)

    def _status(self, text: str) -> None:
        self.progress.update(self.task, description=text)


def run_headless(settings: SessionSettings) -> SessionSummary:
    console = Console(stderr=True)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                        transient=True)
    controller = SessionController(settings, Reporter(progress))
    if controller.model is None:
        console.print(f"manual mode: edit {controller.workspace_dir}/model_new.py and kernels/; each save is "
                      "evaluated. Ctrl-C ends the session.", markup=False)
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["summary"] = controller.run()
        except BaseException as error:  # re-raised on the main thread
            outcome["error"] = error

    worker = threading.Thread(target=work, name="kernelpilot-session")
    with progress:
        worker.start()
        while worker.is_alive():
            try:
                worker.join(0.2)
            except KeyboardInterrupt:
                controller.stop()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["summary"]


def run(args) -> int:
    interactive = not args.headless and sys.stdin.isatty() and sys.stdout.isatty()
    settings = settings_from(args, headless=not interactive)
    if interactive:
        try:
            from kernelpilot.tui.app import run_optimize_app
        except ImportError:
            pass
        else:
            return run_optimize_app(settings)
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the summary's alone, whatever a library prints
        summary = run_headless(settings)
    print(json.dumps(summary.to_json(), indent=2))
    return EXIT_PROVIDER_ERROR if summary.reason.startswith("llm_error") else 0
