"""`kernelpilot bench SUITE`: every task of a suite judged, with the field's metrics per level.

Progress and a live table on the terminal (stderr with `--json`, whose one JSON object is stdout's alone);
with `--out`, each verdict is on disk as it comes and a re-run goes on where the last one stopped. The first
Ctrl-C lets the evaluations in flight finish, a second leaves them; either way the report holds every finished
task. Exit 0 when the bench ran, whatever its verdicts; 130 when it was interrupted.

The agent (`--model`) is composed here, imported only then: `kernelpilot.bench` and the path of
`--solutions` need torch and rich alone, as on a bare GPU machine.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch
from rich.console import Console

from kernelpilot.bench.executors import LocalExecutor, default_workers
from kernelpilot.bench.journal import Journal
from kernelpilot.bench.live import LiveView, final_table
from kernelpilot.bench.report import bench_json, projection_line, write_reports
from kernelpilot.bench.runner import BenchRun
from kernelpilot.bench.solutions import CandidateProvider, reference_provider, solutions_provider
from kernelpilot.bench.suite import SuiteTask, discover_suite, select
from kernelpilot.errors import UsageError
from kernelpilot.harness import EvalOptions
from kernelpilot.harness.protocol import DEFAULT_POLICY
from kernelpilot.harness.prepared import check_options
from kernelpilot.paths import check_kind

EXIT_INTERRUPTED = 130


def numbers(text: str | None, kind: type, flag: str, example: str) -> tuple:
    """A comma-separated list of positive numbers, or a one-line error naming the flag."""
    if text is None:
        return ()
    try:
        values = tuple(kind(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(not 0 < v < float("inf") for v in values):
        raise UsageError(f"{flag} takes comma-separated positive numbers, e.g. {example}, not '{text}'")
    return values


def candidates_of(args) -> str:
    """Which candidates the run judges, in words a resumed run must repeat."""
    given = [flag for flag, value in (("--solutions", args.solutions), ("--model", args.model),
                                      ("--reference-as-candidate", args.reference_as_candidate)) if value]
    if len(given) != 1:
        raise UsageError("give one of --solutions DIR, --model M or --reference-as-candidate"
                         + (f" (not {' and '.join(given)})" if given else ""))
    if args.solutions:
        solutions = Path(args.solutions)
        if not solutions.is_dir():
            raise UsageError(f"--solutions {solutions}: not a folder")
        return f"solutions:{solutions.resolve()}"
    return f"model:{args.model}" if args.model else "reference"


def check_args(args) -> None:
    if args.sample is not None and args.sample < 1:
        raise UsageError("--sample must be at least 1")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.ray_address and args.executor != "ray":
        raise UsageError("--ray-address needs --executor ray")
    if args.resume and not args.out:
        raise UsageError("--resume goes on with the run in --out DIR: give --out")
    if args.out:
        check_kind(Path(args.out), folder=True, flag="--out")
    if args.model and args.executor == "local" and (args.workers or 1) > 1:
        raise UsageError("--model runs one agent session at a time on the local executor (its evaluations "
                         "share the first GPU); use --executor ray to spread the scoring")


def session_provider(args, device: str, policy: str) -> CandidateProvider:
    """Each task optimised headless by the agent, as `kernelpilot optimize --headless` does (the same loop and
    session log); the session's best candidate, else its last, is the one scored."""
    from kernelpilot.agent.controller import SessionController
    from kernelpilot.commands.optimize import settings_from
    from kernelpilot.session.store import candidate_dir

    def provide(task: SuiteTask) -> Path | None:
        session = argparse.Namespace(task=str(task.path), model=args.model, skill=None, device=device, policy=policy,
                                     max_turns=None, budget_usd=None, max_minutes=None, resume=None, allow_shell=[])
        summary = SessionController(settings_from(session, headless=True), lambda event: None).run()
        chosen = summary.best or (summary.candidates[-1] if summary.candidates else None)
        return candidate_dir(summary.session_dir, chosen.candidate_id) if chosen else None

    return provide


def make_executor(args, options: EvalOptions):
    if args.executor == "ray":
        from kernelpilot.bench.ray_executor import RayExecutor

        return RayExecutor(options, args.workers, args.ray_address)
    return LocalExecutor(options, args.workers or default_workers(options.device))


def run(args) -> int:
    check_args(args)
    policy = args.policy or DEFAULT_POLICY
    candidates = candidates_of(args)
    levels = numbers(args.levels, int, "--levels", "1,2,3")
    p_values = numbers(args.p, float, "--p", "1.0,1.5,2.0")
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    defaults = EvalOptions()
    options = EvalOptions(device=device, policy=policy,
                          timeout_s=defaults.timeout_s if args.timeout is None else args.timeout)
    check_options(options)
    suite = Path(args.suite)
    out = Path(args.out) if args.out else None
    with contextlib.ExitStack() as cleanup:
        scratch = out or Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="kernelpilot-bench-")))
        selected = select(discover_suite(suite, scratch), levels, args.tasks)
        tasks = select(selected, sample=args.sample, seed=args.seed)
        if not tasks:
            raise UsageError(f"no task of {suite} matches the selection (--levels, --tasks)")
        settings = {"suite": str(suite.resolve()), "candidates": candidates, "device": device, "policy": policy,
                    "timeout_s": options.timeout_s}
        journal = Journal(out, settings) if out else None
        if journal:
            cleanup.callback(journal.close)
        provide = (solutions_provider(Path(args.solutions)) if args.solutions
                   else session_provider(args, device, policy) if args.model
                   else reference_provider(scratch))
        executor = make_executor(args, options)
        cleanup.callback(executor.close)
        console = Console(stderr=args.json)
        with contextlib.redirect_stdout(sys.stderr):  # stdout is the JSON's alone, whatever a library prints
            outcomes, complete, seconds = _run(tasks, provide, executor, journal, console)
        data = bench_json({"suite": str(suite), "candidates": candidates, "device": device, "policy": policy,
                           "executor": args.executor, "workers": executor.workers, "wall_seconds": seconds},
                          outcomes, p_values, complete, Counter(task.level for task in selected))
        if out and (note := write_reports(out, data)):
            console.print(note, markup=False, soft_wrap=True)
        if args.json:
            print(json.dumps(data, allow_nan=False))
        else:
            console.print(final_table(data["summary"], f"{suite} · {candidates} · {device}, {policy}"))
            if projection := projection_line(data):
                console.print(projection, markup=False, soft_wrap=True)
    return 0 if complete else EXIT_INTERRUPTED


def _run(tasks: list[SuiteTask], provide: CandidateProvider, executor, journal: Journal | None,
         console: Console) -> tuple[list, bool, float]:
    """(outcomes in the suite's order, whether every task has one, wall seconds of this run)."""
    started = time.perf_counter()
    bench = BenchRun(tasks, provide, executor, journal)
    if bench.earlier:
        console.print(f"going on from {journal.path}: {len(bench.earlier)} of {len(tasks)} tasks done", markup=False,
                      soft_wrap=True)
    with LiveView(console, len(tasks), bench.earlier) as view:
        bench.on_start, bench.on_outcome = view.started, view.finished
        bench.start()
        try:
            bench.wait()
        except KeyboardInterrupt:
            bench.stop.set()
            view.note(f"stopping: {bench.in_flight()} evaluation(s) in flight finish first (Ctrl-C again to leave "
                      "them)")
            with contextlib.suppress(KeyboardInterrupt):
                bench.wait()
    by_name = {o.task: o for o in bench.earlier + bench.outcomes}
    outcomes = [by_name[t.name] for t in tasks if t.name in by_name]
    return outcomes, len(outcomes) == len(tasks), round(time.perf_counter() - started, 1)
