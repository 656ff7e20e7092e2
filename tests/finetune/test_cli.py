"""`kernelpilot finetune` on session logs: what it prints, what it refuses in one line (exit 2), DDP and FSDP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

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


def test_an_out_that_is_a_file_is_refused_before_any_model_is_loaded(capsys, tmp_path):
    """The base model named does not exist: the line about --out comes before any attempt to load it."""
    write_log(trajectory(["Done."], 3), tmp_path / "logs")
    taken = tmp_path / "taken"
    taken.write_text("kept\n")
    assert finetune(capsys, str(tmp_path / "logs"), "--base-model", "no-such-model", "--out", str(taken)) == (
        2, "", f"kernelpilot: --out {taken}: is a file, not a folder\n")
    assert taken.read_text() == "kept\n"


def test_a_file_that_is_no_session_log_counts_as_skipped(capsys, tmp_path):
    """The line that says nothing is left to train on counts the log it just said it skipped."""
    script = tmp_path / "not_a_session.py"
    script.write_text("print('hello')\n")
    status, out, err = finetune(capsys, str(script), "--base-model", "smollm2-135m", "--out", str(tmp_path / "o"))
    skipped, refused = err.splitlines()
    assert (status, out) == (2, "") and skipped.startswith(f"skipped {script}:1: corrupt session log line")
    assert refused == "kernelpilot: nothing to train on: 1 sessions read, 1 skipped; no session log could be read"
    assert not (tmp_path / "o").exists()


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


ARGS = ("--base-model", "smollm2-135m", "--max-steps", "1", "--batch-size", "3", "--lora-rank", "4")


@pytest.fixture(scope="module")
def logs(smollm2, tmp_path_factory) -> Path:
    """Three sessions with behaviour logprobs: 2 for RFT and 3 for the critic and PPO, uneven over two ranks."""
    model, tokenizer = smollm2
    root = tmp_path_factory.mktemp("logs")
    for i, (responses, reward) in enumerate([([tool_call("Fuse the add into the relu."), "Done."], 3),
                                             (["Write one kernel."], 2), ([tool_call("Call torch.relu.")], -1)]):
        write_log(with_behaviour(trajectory(responses, reward, session_id=f"s{i}"), model, tokenizer), root)
    return root


def launch(logs: Path, out: Path, *argv: str, processes: int = 1) -> dict:
    """`kernelpilot finetune` on `logs` (under torchrun for several processes, over gloo); its report.json."""
    launcher = ["-m", "torch.distributed.run", "--nproc_per_node", str(processes)] if processes > 1 else []
    subprocess.run([sys.executable, *launcher, "-m", "kernelpilot", "finetune", str(logs), *ARGS, *argv,
                    "--out", str(out)], check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def alone(logs, tmp_path_factory) -> Path:
    """The output folder of one process's run on `logs`."""
    out = tmp_path_factory.mktemp("alone") / "run"
    launch(logs, out)
    return out


def assert_same_losses(split: dict, alone: Path) -> None:
    one = json.loads((alone / "report.json").read_text())
    assert split["world_size"] == 2
    assert [s["stage"] for s in split["steps"]] == ["rft", "critic", "ppo"]
    for single, shared in zip(one["steps"], split["steps"]):
        assert shared["tokens"] == single["tokens"]
        assert shared["loss"] == pytest.approx(single["loss"], rel=1e-4)


@pytest.mark.slow
def test_two_processes_compute_the_same_step_1_losses_as_one(logs, alone, tmp_path):
    """torchrun over gloo on the CPU: the batch split between ranks (unevenly: 2 RFT sessions, 3 for the critic
    and PPO), the losses normalised by the token count of all ranks together."""
    assert_same_losses(launch(logs, tmp_path / "two", processes=2), alone)


@pytest.mark.slow
def test_fsdp_over_two_processes_trains_what_one_does_and_saves_a_whole_adapter(logs, alone, tmp_path):
    """--fsdp shards the base over the ranks (FSDP2, gloo): the same losses as one process though a rank with fewer
    sessions runs padding passes, an adapter saved whole that loads in one process and equals one process's, and a
    checkpoint that resumes sharded."""
    from peft import PeftModel
    from safetensors.torch import load_file

    from kernelpilot.finetune.pretrained import load_pretrained

    sharded = tmp_path / "fsdp"
    assert_same_losses(launch(logs, sharded, "--fsdp", processes=2), alone)
    one, two = (load_file(run / "adapter" / "adapter_model.safetensors") for run in (alone, sharded))
    assert {name: t.shape for name, t in two.items()} == {name: t.shape for name, t in one.items()}
    assert all(t.abs().max() > 0 for name, t in two.items() if "lora_B" in name), "every adapted layer trained"
    for name, tensor in two.items():
        torch.testing.assert_close(tensor, one[name], atol=1e-6, rtol=1e-3)
    PeftModel.from_pretrained(load_pretrained("smollm2-135m", device="cpu")[0], sharded / "adapter")

    resumed = launch(logs, sharded, "--fsdp", "--resume", "--epochs", "2", "--max-steps", "2", processes=2)
    assert [(s["stage"], s["stage_step"]) for s in resumed["steps"]][-2:] == [("ppo", 1), ("ppo", 2)]
