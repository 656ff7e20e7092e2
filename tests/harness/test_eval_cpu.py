"""The harness end to end on the CPU backend: real C++ builds, real runs, real timing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import kernelpilot as kernelpilot_package
from kernelpilot.commands.evaluate import summary
from kernelpilot.errors import CandidateError
from kernelpilot.harness import EvalOptions, EvalResult, evaluate, prepare_judge, processes
from kernelpilot.harness import protocol as protocol_module
from kernelpilot.harness.sandbox import unshare_form
from kernelpilot.harness.task_files import sha256_file
from kernelpilot.harness.worker_process import SCRATCH_PREFIX, scratch_parent, worker_pid

CASES = Path(__file__).parent / "cases"
TASK = CASES / "relu_scale.py"
SMALL = CASES / "relu_scale_small.py"
CPU = EvalOptions(device="cpu")


def kernelpilot(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelpilot", *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def fused():
    return evaluate(TASK, CASES / "fused", CPU)


def test_fused_kernel_is_correct_and_beats_eager(fused):
    assert fused.built and fused.correct and not fused.violations, fused.error
    assert fused.reward >= 2, fused.times_ms
    assert fused.speedup_vs_eager > 1.05
    assert fused.max_abs_err < 1e-4
    assert fused.times_ms["compile"] is not None, "torch.compile is timed in the same run"
    assert {"kernelpilot::relu_bias_scale"} <= {k.name for k in fused.kernels}


def test_result_records_the_protocol(fused):
    protocol = fused.protocol
    assert protocol["trials"] >= 5 and protocol["timed_runs"] >= 30
    assert len(set(protocol["verify_seeds"])) == protocol["trials"]
    assert protocol["isolation"] in ("bwrap", "unshare+pid+ro", "unshare+pid", "unshare+ro", "unshare", "none")
    assert protocol["reference_dtype"] == "float64"
    assert protocol["input_sets"] == len(protocol["timing_seeds"]) == 3


@pytest.mark.slow
def test_a_task_whose_inputs_fill_the_timing_s_room_is_timed_on_one_input_set(monkeypatch):
    monkeypatch.setattr(protocol_module, "TIMING_INPUT_BYTES", 1)  # as 6 GB of inputs against 4 GB of room
    result = evaluate(SMALL, CASES / "fused", CPU)
    assert result.correct and not result.violations, (result.error, result.violations)
    assert result.protocol["input_sets"] == len(result.protocol["timing_seeds"]) == 1


def test_wrong_kernel_gets_minus_one_with_the_mismatch():
    result = evaluate(SMALL, CASES / "wrong", CPU)
    assert result.built and not result.correct and result.reward == -1
    assert "elements differ" in result.error
    worst = result.outputs[0]
    assert worst.mismatched > 0 and worst.first_mismatches
    assert worst.error_grid and max(max(row) for row in worst.error_grid) > worst.atol


def test_compile_error_is_a_verdict_with_the_compilers_message():
    result = evaluate(SMALL, CASES / "broken", CPU)
    assert not result.built and result.reward == -1
    assert "kernels/relu_bias_scale.cpp:" in result.error
    assert "error" in result.build_log


def test_single_file_candidate_with_embedded_kernel():
    result = evaluate(SMALL, CASES / "single_file.py", CPU)
    assert result.correct and not result.violations, (result.error, result.violations)
    assert result.reward >= 1


def test_hanging_kernel_times_out_instead_of_hanging():
    result = evaluate(SMALL, CASES / "hang", EvalOptions(device="cpu", timeout_s=5))
    assert result.reward == -1
    assert "timed out after 5 s" in result.error


def test_crashing_kernel_is_a_verdict_not_a_crash():
    result = evaluate(SMALL, CASES / "crash", CPU)
    assert result.reward == -1
    assert "SIGSEGV" in result.error


@pytest.mark.parametrize("modes", [["default"], ["default", "max-autotune"]])
def test_eval_summary_names_each_time_once(modes):
    times = {"eager": 2.0, "compile": 1.5, "candidate": 1.0, **{f"compile:{mode}": 1.5 for mode in modes}}
    line = summary(EvalResult(task="t.py", candidate="c.py", device="cpu", times_ms=times)).splitlines()[1]
    assert line.count("compile") == (1 if len(modes) == 1 else 1 + len(modes)), line


def test_cli_json_is_one_object_and_exit_zero_for_a_failed_candidate():
    proc = kernelpilot("eval", str(SMALL), str(CASES / "broken"), "--device", "cpu", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["reward"] == -1 and data["built"] is False
    assert {"task", "candidate", "device", "built", "correct", "reward", "violations", "error", "max_abs_err",
            "max_rel_err", "times_ms", "spread_pct", "speedup_vs_eager", "speedup_vs_compile", "kernels",
            "protocol"} <= set(data)


def test_ncu_on_the_cpu_is_said_to_be_ignored_not_silently_dropped():
    proc = kernelpilot("eval", str(SMALL), str(CASES / "broken"), "--device", "cpu", "--ncu", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["reward"] == -1
    assert "kernelpilot: --ncu reads CUDA counters: ignored with --device cpu\n" in proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["eval", "nope.py", str(CASES / "fused"), "--device", "cpu"], "task file not found"),
    (["eval", str(CASES / "missing_names.py"), str(CASES / "fused"), "--device", "cpu"], "does not define"),
    (["eval", str(SMALL), str(CASES / "nothing_here"), "--device", "cpu"], "candidate not found"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--trials", "3"], "--trials must be at least 5"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--timed-runs", "29"],
     "kernelpilot: --timed-runs must be at least 30, not 29\n"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--trials", "0", "--timed-runs", "1"],
     "kernelpilot: --trials must be at least 5, not 0; --timed-runs must be at least 30, not 1\n"),
    (["eval", str(SMALL)], "required"),
    (["eval", str(CASES), str(CASES / "fused"), "--device", "cpu"], "is a directory"),
    (["eval", str(CASES / "inputs_tensor.py"), str(CASES / "single_file.py"), "--device", "cpu", "--json"],
     "get_inputs() returns Tensor"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--timeout", "nan"],
     "kernelpilot: --timeout must be a positive, finite number of seconds, not nan\n"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--timeout", "inf"],
     "kernelpilot: --timeout must be a positive, finite number of seconds, not inf\n"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--tol", "nan"], "non-negative number"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--tol", "inf"], "finite, non-negative"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--build-timeout", "inf"],
     "kernelpilot: --build-timeout must be a positive, finite number of seconds, not inf\n"),
    (["eval", str(SMALL), str(CASES / "fused"), "--device", "cpu", "--compile-modes", "fast"], "unknown compile mode"),
])
def test_unusable_input_is_one_line_and_exit_two(args, message):
    proc = kernelpilot(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("task", ["argmax", pytest.param("mse_loss", marks=pytest.mark.slow)])
def test_integer_and_one_value_outputs_are_judged_not_refused_as_degenerate(task):
    result = evaluate(CASES / "outputs" / f"{task}.py", CASES / "outputs" / f"{task}_in_torch.py",
                      EvalOptions(device="cpu", policy="mixed"))
    assert result.correct, result.error


def test_an_output_that_barely_varies_is_judged_at_a_tolerance_a_constant_fails():
    mixed = EvalOptions(device="cpu", policy="mixed")
    honest = evaluate(CASES / "outputs" / "barely_varies.py", CASES / "outputs" / "barely_varies_in_torch.py", mixed)
    constant = evaluate(CASES / "outputs" / "barely_varies.py", CASES / "outputs" / "barely_varies_as_constant.py",
                        mixed)
    assert honest.correct, honest.error
    assert not constant.correct and constant.reward == -1
    [judged_at] = honest.protocol["tolerances"]
    assert judged_at["narrowed"] and judged_at["rtol"] == 0 and 0 < judged_at["atol"] < 0.1


def test_a_broadcast_output_where_the_reference_returns_one_is_judged_not_refused():
    result = evaluate(CASES / "outputs" / "broadcast.py", CASES / "outputs" / "broadcast_in_torch.py",
                      EvalOptions(device="cpu", policy="mixed"))
    assert result.correct, result.error


def test_a_forward_that_returns_no_tensor_is_a_wrong_answer_named_as_such():
    result = evaluate(SMALL, CASES / "returns_none.py", EvalOptions(device="cpu", policy="mixed"))
    assert result.reward == -1 and not result.correct
    assert "forward returned NoneType where the reference returns tensors" in result.error
    assert "tensor_subclass" not in [v.check for v in result.violations]


def test_right_values_in_another_memory_layout_are_wrong_with_the_strides_named():
    result = evaluate(SMALL, CASES / "column_major.py", CPU)
    assert result.built and not result.correct and result.reward == -1
    assert "strides (1, 256), the reference (1024, 1)" in result.error


def test_a_flood_of_output_is_drained_and_only_its_end_kept():
    result = evaluate(SMALL, CASES / "floods_output.py", CPU)
    assert result.reward == -1 and result.error.startswith("verify: RuntimeError: flooded")
    assert result.error.endswith("the last words after the flood") and len(result.error) < 4000


def test_degenerate_task_is_rejected_with_exit_two():
    proc = kernelpilot("eval", str(CASES / "degenerate.py"), str(CASES / "single_file.py"), "--device", "cpu")
    assert proc.returncode == 2
    assert "degenerate" in proc.stderr and "Traceback" not in proc.stderr


def test_scratch_left_by_a_killed_evaluation_is_removed_by_the_next():
    """A kill -9 skips every cleanup; the reference answers it left in /dev/shm would hold memory for good,
    and, with /dev/shm full of them, the next evaluation's scratch goes to the temp folder: both are swept."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    parents = {Path(p) for p in ("/dev/shm", tempfile.gettempdir()) if Path(p).is_dir()}
    orphans = [parent / f"{SCRATCH_PREFIX}{dead.pid}-orphan" for parent in parents]
    live = Path(scratch_parent() or tempfile.gettempdir()) / f"{SCRATCH_PREFIX}{os.getpid()}-live"
    for folder in (*orphans, live):
        folder.mkdir()
        (folder / "msg-0000.pt").write_bytes(b"x" * 1024)
    try:
        # kernels for the other backend: judged right after the judge's worker starts
        result = evaluate(TASK, CASES / "cuda" / "fused", EvalOptions(device="cpu"))
        assert not result.built
        assert not any(orphan.exists() for orphan in orphans) and live.exists()
    finally:
        for folder in (*orphans, live):
            shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("sandbox", ["strongest", "unshare"])
def test_the_candidate_can_neither_see_the_judge_nor_write_outside_its_scratch(sandbox, monkeypatch):
    if sandbox == "unshare":
        form = unshare_form()
        if form is None or "-p" not in form[0] or not form[1]:
            pytest.skip("unshare cannot make a PID namespace and a read-only system here")
        monkeypatch.setenv("KERNELPILOT_SANDBOX", "unshare")  # the GPU images' fallback: no bwrap
    mark = Path(kernelpilot_package.__file__).parent / "candidate_was_here"
    shm_mark = Path("/dev/shm/kernelpilot-candidate-was-here")  # a private /dev/shm is fine, the host's is not
    shm_mark.unlink(missing_ok=True)
    try:
        done = kernelpilot("eval", str(SMALL), str(CASES / "reaches_out.py"), "--device", "cpu", "--json")
        result = json.loads(done.stdout)
        assert result["reward"] >= 1, result["error"]
        assert not mark.exists()
        assert not shm_mark.exists(), "the candidate left a file in the host's /dev/shm"
        if sandbox == "unshare":
            assert result["protocol"]["isolation"] == "unshare+pid+ro"
    finally:
        mark.unlink(missing_ok=True)
        shm_mark.unlink(missing_ok=True)


def test_batchnorm_is_judged_with_batch_statistics_as_kernelbench_runs_it():
    # KernelBench runs Model as constructed (training mode) under no_grad: BatchNorm normalises each batch by
    # its own statistics, so a kernel that does the same is right, and the mode is recorded.
    result = evaluate(CASES / "batchnorm.py", CASES / "batchnorm_stats", CPU)
    assert result.built and result.correct and not result.violations, (result.error, result.violations)
    assert result.protocol["model_mode"] == "training"


def _references_made(prepared) -> None:
    """Wait until the judge prepared ahead idles, its references made (its worker's CPU time stops growing)."""
    pid, last = None, None
    for _ in range(240):
        pid = pid or worker_pid(prepared.worker.process.pid)
        used = processes.cpu_time(pid) if pid else None
        if used is not None and used == last:
            return
        last = used
        time.sleep(0.5)
    raise AssertionError("the prepared worker did not settle in 2 minutes")


def _gone(prepared) -> bool:
    return prepared.worker.process.poll() is not None and not prepared.worker.scratch.exists()


def test_a_judge_prepared_ahead_has_its_references_when_the_candidate_comes():
    prepared = prepare_judge(SMALL, CPU)
    _references_made(prepared)
    waiting = [p.name for p in prepared.worker.scratch.iterdir() if p.name.startswith(("msg-", ".msg-"))]
    assert not waiting, f"the references wait on disk, where the agent's shell could read them: {waiting}"
    assert prepared.setup_messages, "the judge read nothing while it was prepared"
    result = evaluate(SMALL, CASES / "single_file.py", CPU, prepared=prepared)
    assert result.correct and result.reward >= 1, (result.error, result.violations)
    seconds = result.protocol["phase_seconds"]
    assert seconds["start"] + seconds["setup"] < 1.0, f"torch and the references were not ready: {seconds}"
    assert _gone(prepared)


def test_a_judge_prepared_for_other_options_or_another_task_is_discarded_not_used(tmp_path):
    other_options = prepare_judge(SMALL, EvalOptions(device="cpu", env={"KERNELPILOT_TEST_MARK": "other"}))
    assert evaluate(SMALL, CASES / "single_file.py", CPU, prepared=other_options).correct
    assert _gone(other_options)
    task = tmp_path / SMALL.name
    shutil.copyfile(SMALL, task)
    edited_since = prepare_judge(task, CPU)
    task.write_text(SMALL.read_text() + "\n# edited after the judge was prepared\n")
    result = evaluate(task, CASES / "single_file.py", CPU, prepared=edited_since)
    assert result.correct and _gone(edited_since)
    assert result.protocol["task_sha256"] == sha256_file(task), "judged against the task as it was prepared"


def test_a_judge_handed_over_with_unusable_input_is_discarded(tmp_path):
    prepared = prepare_judge(SMALL, CPU)
    with pytest.raises(CandidateError):
        evaluate(SMALL, tmp_path / "no_such_candidate.py", CPU, prepared=prepared)
    assert _gone(prepared)