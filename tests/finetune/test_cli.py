"""`kernelpilot finetune` on session logs: what it prints, what it refuses in one line (exit 2), and DDP."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kernelpilot.cli import main

from .sessions import tool_call, trajectory, with_behaviour, write_log


def finetune(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["finetune", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_a_path_without_sessions_is_one_line_and_exit_2(capsys, tmp_path):
    assert finetune(capsys, str(tmp_path / "nowhere"), "--base-model", "smollm2-135m") == (
        2, "", f"kernelpilot: {tmp_path / 'nowhere'}: no such file or directory\n")


def test_a_base_model_that_cannot_be_found_is_one_line_and_exit_2(capsys, tmp_path, finetune_extra):
    write_log(trajectory(["Done."], 3), tmp_path)
    status, _, err = finetune(capsys, str(tmp_path), "--base-model", "no-such-model", "--out", str(tmp_path / "o"))
    assert status == 2 and err.startswith("kernelpilot: local model 'no-such-model' not found") and err.count("\n") == 1


def test_bad_numbers_are_one_line_and_exit_2(capsys, tmp_path):
    status, _, err = finetune(capsys, str(tmp_path), "--base-model", "smollm2-135m", "--lora-rank", "0")
    assert (status, err) == (2, "kernelpilot: --lora-rank must be at least 1, not 0\n")


def test_without_the_finetune_extra_the_line_names_it(capsys, monkeypatch, tmp_path):
    write_log(trajectory(["Done."], 3), tmp_path)
    monkeypatch.setitem(sys.modules, "peft", None)
    status, _, err = finetune(capsys, str(tmp_path), "--base-model", "smollm2-135m", "--out", str(tmp_path / "o"))
    assert (status, err) == (2, "kernelpilot: adapters need peft: pip install kernelpilot[finetune]\n")


def test_a_corrupt_log_is_skipped_with_one_line_and_the_rest_trains(capsys, smollm2, tmp_path):
    write_log(trajectory(["Done."], 3, session_id="good"), tmp_path / "logs")
    corrupt = tmp_path / "logs" / "corrupt" / "session.jsonl"
    corrupt.parent.mkdir()
    corrupt.write_text('{"kind": "session_started"\nnot json\n')
    status, out, err = finetune(capsys, str(tmp_path / "logs"), "--base-model", "smollm2-135m", "--stage", "rft",
                                "--lora-rank", "4", "--out", str(tmp_path / "run"))
    assert status == 0
    why = "corrupt session log line (JSONDecodeError: Expecting ',' delimiter: line 1 column 27 (char 26))"
    assert [line for line in err.splitlines() if "corrupt" in line] == [f"skipped {corrupt}:1: {why}"]
    assert out.startswith("rft-step1-") and str(tmp_path / "run" / "adapter") in out
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["sessions"]["read"] == 2 and len(report["sessions"]["skipped"]) == 1


@pytest.mark.slow
def test_two_processes_compute_the_same_step_1_losses_as_one(smollm2, tmp_path):
    """torchrun over gloo on the CPU: the batch split between ranks (unevenly: 2 RFT sessions, 3 for the critic
    and PPO), the losses normalised by the token count of all ranks together."""
    model, tokenizer = smollm2
    for i, (responses, reward) in enumerate([([tool_call("Fuse the add into the relu."), "Done."], 3),
                                             (["Write one kernel."], 2), ([tool_call("Call torch.relu.")], -1)]):
        write_log(with_behaviour(trajectory(responses, reward, session_id=f"s{i}"), model, tokenizer), tmp_path / "logs")
    args = ["finetune", str(tmp_path / "logs"), "--base-model", "smollm2-135m", "--max-steps", "1", "--batch-size", "3",
            "--lora-rank", "4"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "kernelpilot", *args, "--out", str(tmp_path / "one")], check=True, env=env)
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "kernelpilot", *args,
                    "--out", str(tmp_path / "two")], check=True, env=env)
    one, two = (json.loads((tmp_path / run / "report.json").read_text()) for run in ("one", "two"))
    assert two["world_size"] == 2
    assert [s["stage"] for s in two["steps"]] == ["rft", "critic", "ppo"]
    for alone, split in zip(one["steps"], two["steps"]):
        assert split["tokens"] == alone["tokens"]
        assert split["loss"] == pytest.approx(alone["loss"], rel=1e-4)
