"""The event loop keeps ticking while the session builds and evaluates (and streams tokens and its build log).

Two measures between ticks of a 10 ms timer, taken while evaluations run: the wall-clock gap, which would show the loop waiting on the
session (a synchronous evaluate would stall it for the whole 0.8 s), and the main thread's CPU time, which
shows work done on the loop in one stretch. CPU time rather than wall time for the 50 ms bound, so that
other processes competing for the machine's cores do not count as the app blocking; the cyclic garbage
collector is held off while measuring for the same reason (its full passes are the interpreter's pauses,
which the app shortens with `gc.freeze()` at start-up).
"""

from __future__ import annotations

import gc
import threading
import time

from conftest import settle
from fixtures import ScriptedSession, script

from kernelpilot.session.events import BuildLogLine, Evaluation, TokenDelta
from kernelpilot.tui.app import KernelpilotApp
from kernelpilot.tui.widgets.candidates import CandidatesTable

MAX_BUSY_S = 0.050
TICK_S = 0.010
EVALUATION_S = 0.8


async def test_loop_never_blocks_for_more_than_50ms_during_slow_evaluations(tmp_path):
    task = tmp_path / "model.py"
    events = script(str(task))
    events[4:4] = [TokenDelta(turn=2, text=f"token {i} ", ts=0.0) for i in range(200)]
    started = threading.Event()

    def connect(on_event):
        def slow_evaluation(evaluation: Evaluation) -> None:
            """A build and evaluation the session thread waits on, its compiler output streaming in."""
            begin = time.perf_counter()
            while time.perf_counter() - begin < EVALUATION_S:
                on_event(BuildLogLine(candidate_id=evaluation.candidate_id, line="nvcc: compiling…", ts=0.0))
                time.sleep(0.05)
            windows.append((begin, time.perf_counter()))

        return ScriptedSession(on_event, events, before_evaluation=slow_evaluation, started=started)

    app = KernelpilotApp(connect, task_path=task, gpu_interval=0)
    gaps: list[float] = []
    busy: list[tuple[float, float]] = []
    windows: list[tuple[float, float]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        last_wall, last_cpu = time.perf_counter(), time.thread_time()

        def tick() -> None:
            nonlocal last_wall, last_cpu
            wall, cpu = time.perf_counter(), time.thread_time()
            gaps.append(wall - last_wall - TICK_S)
            busy.append((wall, cpu - last_cpu))
            last_wall, last_cpu = wall, cpu

        app.set_interval(TICK_S, tick)
        gc.disable()
        try:
            started.set()
            await settle(pilot)
        finally:
            gc.enable()
        assert len(app.query_one(CandidatesTable).results) == 5
    assert len(gaps) > 5 * EVALUATION_S / TICK_S / 4  # the timer kept ticking through the evaluations
    assert max(gaps) < EVALUATION_S / 2, "the loop waited on an evaluation"
    during = [cpu for at, cpu in busy if any(begin <= at <= end for begin, end in windows)]
    assert max(during) < MAX_BUSY_S, f"the loop was busy for {max(during) * 1000:.0f} ms at a stretch"
