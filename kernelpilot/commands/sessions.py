"""`kernelpilot sessions list|show|export`: read sessions from their logs (nothing runs)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from kernelpilot.config import load_config
from kernelpilot.errors import UsageError
from kernelpilot.harness.result import format_speedup
from kernelpilot.paths import check_kind
from kernelpilot.session.export import export_candidate
from kernelpilot.session.session import Session
from kernelpilot.session.state import CandidateRecord
from kernelpilot.session.store import list_sessions


def _candidate_line(record: CandidateRecord) -> str:
    r = record.result
    return (f"  {record.candidate_id:>3}  {record.commit[:10]}  {r.status:<15} reward {r.reward:>2}  "
            f"vs eager {format_speedup(r.speedup_vs_eager):>8}  vs compile {format_speedup(r.speedup_vs_compile):>8}")


def _list(root: Path) -> int:
    directories = list_sessions(root)
    if not directories:
        print(f"no sessions under {root}")
        return 0
    for directory in directories:
        session = Session.open(directory)
        best = session.best()
        best_speedup = format_speedup(best.result.speedup_vs_compile if best else None)
        ended = session.ended
        print(f"{session.session_id}  {Path(session.started.task_path).name:<20} {session.started.model:<32} "
              f"{len(session.candidates()):>3} candidates  best {best_speedup:>7} vs compile  "
              f"{ended.reason if ended else 'unfinished'}")
    return 0


def _show(session: Session) -> int:
    started, ended, usage = session.started, session.ended, session.usage
    print(f"session {session.session_id}  ({time.strftime('%Y-%m-%d %H:%M', time.localtime(started.ts))})")
    print(f"task     {started.task_path}  (sha256 {started.task_sha256[:12]})")
    print(f"model    {started.model}  skill {started.skill}  device {started.device}  policy {started.policy}")
    print(f"turns    {usage.turns}  tokens {usage.prompt_tokens} in / {usage.completion_tokens} out  "
          f"cost ${usage.cost_usd:.4f}")
    print(f"ended    {ended.reason if ended else 'unfinished (still running, or killed)'}")
    print("candidates:" if session.candidates() else "candidates: none")
    for candidate in session.candidates():
        print(_candidate_line(candidate))
    best = session.best()
    print(f"best     candidate {best.candidate_id} ({best.commit[:10]})" if best else "best     none correct yet")
    print(f"log      {session.log_path}\nworkspace {session.workspace_dir}")
    return 0


def run(args) -> int:
    root = Path(args.root) if args.root else Path(load_config().sessions_root)
    check_kind(root, folder=True, flag="--root" if args.root else "sessions root")
    if args.action == "list":
        if args.session_id:
            raise UsageError(f"'sessions list' takes no session id (got '{args.session_id}')")
        return _list(root)
    if not args.session_id:
        raise UsageError(f"'sessions {args.action}' needs a session id (see `kernelpilot sessions list`)")
    session = Session.open(args.session_id, root)
    if args.action == "show":
        if sys.stdin.isatty() and sys.stdout.isatty():
            from kernelpilot.tui.app import run_session_app

            return run_session_app(args.session_id, root)
        return _show(session)
    destination = export_candidate(session, Path(args.out) if args.out else None, args.format, args.candidate)
    print(destination)
    return 0
