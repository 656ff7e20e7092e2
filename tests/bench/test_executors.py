"""A judge's worker started ahead; the Ray executor (a local Ray, two CPU workers) against the local one's
verdicts; and `--model`: each task optimised headless by the agent from a replayed transcript, the session's
best candidate scored."""

from __future__ import annotations

import json

import pytest
from bench_helpers import ADVERSARIAL, EXPECTED, TASK, bench, make_suite

from kernelpilot.bench.executors import SPARES_AHEAD, Slot
from kernelpilot.errors import TaskError
from kernelpilot.harness import EvalOptions, prepare_judge
from kernelpilot.harness.worker_process import discard_worker, start_worker
from kernelpilot.session.events import Evaluation
from kernelpilot.session.log import read_events
from kernelpilot.session.store import LOG_NAME

WORKSPACE = ADVERSARIAL / "cpu" / "legit_workspace"


@pytest.mark.slow
def test_ray_executor_gives_the_local_verdicts(tmp_path):
    pytest.importorskip("ray")
    suite, solutions = make_suite(tmp_path)
    done = bench(str(suite), "--solutions", str(solutions), "--device", "cpu", "--executor", "ray", "--workers", "2",
                 "--json", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout)
    assert {r["task"]: r["status"] for r in data["results"]} == EXPECTED
    assert data["executor"] == "ray" and data["workers"] == 2
    assert [v["check"] for r in data["results"] for v in r["violations"]] == ["op_audit"]
    assert str(solutions) in next(r for r in data["results"] if r["status"] == "correct")["candidate"]


@pytest.mark.slow
def test_model_scores_each_sessions_best_candidate(tmp_path):
    suite = tmp_path / "suite" / "level1"
    suite.mkdir(parents=True)
    (suite / "1_relu_bias.py").write_text(TASK.read_text())
    transcript = tmp_path / "transcript.json"
    transcript.write_text(json.dumps({"messages": [
        {"content": "A fused kernel.", "tool_calls": [
            {"id": f"w{i}", "name": "write", "arguments": {"path": path, "content": (WORKSPACE / path).read_text()}}
            for i, path in enumerate(("kernels/relu_bias.cpp", "model_new.py"))] + [
            {"id": "e", "name": "evaluate", "arguments": {}}]},
        {"content": "Done.", "tool_calls": [{"id": "d", "name": "done", "arguments": {}}]}]}))
    done = bench(str(suite.parent), "--model", f"replay:{transcript}", "--device", "cpu", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = json.loads(done.stdout)["results"]
    assert result["status"] == "correct" and result["reward"] >= 1, result
    sessions = list((tmp_path / ".kernelpilot" / "sessions").iterdir())
    assert len(sessions) == 1 and result["candidate"] == str(sessions[0] / "candidates" / "1")
    evaluations = [e for e in read_events(sessions[0] / LOG_NAME) if isinstance(e, Evaluation)]
    assert [e.result.status for e in evaluations] == ["correct"]


def test_a_worker_started_ahead_is_the_next_judges():
    """What the local executor does on a GPU between tasks: the next judge's worker starts during the current
    evaluation and the next task's judge takes it; a task that cannot load discards it."""
    options = EvalOptions(device="cpu")
    broken = start_worker(options)
    with pytest.raises(TaskError):
        prepare_judge(ADVERSARIAL / "no_such_task.py", options, worker=broken)
    assert broken.process.poll() is not None
    ahead = start_worker(options)
    prepared = prepare_judge(TASK, options, worker=ahead)
    try:
        assert prepared.worker is ahead and prepared.suits(TASK.resolve(), options)
    finally:
        prepared.discard()


def test_the_next_judges_workers_start_once_the_baselines_are_timed():
    """On a GPU, the local executor starts the next tasks' workers as the candidate's import begins: never while
    eager or torch.compile is timed (a start-up then would slow the baseline and flatter the candidate). The
    next task takes the one started earliest; the task after it finds one waiting still."""
    slot = Slot(EvalOptions(device="cuda"))
    try:
        for line in ("[setup]", "[baseline]", "building kernels/relu.cu"):
            slot.on_log(line)
            assert not slot.spares, line
        slot.on_log("[import]")
        assert len(slot.spares) == SPARES_AHEAD
        earliest = slot.spares[0]
        slot.on_log("[import]")
        assert len(slot.spares) == SPARES_AHEAD and slot.spares[0] is earliest
        discard_worker(slot.spares.popleft())
        slot.on_log("[import]")
        assert len(slot.spares) == SPARES_AHEAD and slot.spares[0] is not earliest
    finally:
        slot.close()
    cpu = Slot(EvalOptions(device="cpu"))
    cpu.on_log("[import]")
    assert not cpu.spares  # on the CPU every evaluation's timing shares the cores with a start-up
