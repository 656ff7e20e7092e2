"""One step of each stage on SmolLM2-135M, on the CPU: what trains, what does not, and what a run leaves behind."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import replace

import pytest
import torch

from kernelpilot.errors import UsageError
from kernelpilot.finetune import distributed
from kernelpilot.finetune.pretrained import load_pretrained
from kernelpilot.finetune.recipe import FinetuneOptions
from kernelpilot.finetune.tokenise import stop_token_ids, tokenise
from kernelpilot.finetune.trainer import Trainer, finetune, with_adapter

from .sessions import tool_call, trajectory, with_behaviour

GOOD = [tool_call("Fuse the add into the relu."), "Done: one kernel."]
BAD = [tool_call("Call torch.relu.")]


@pytest.fixture(scope="module")
def sessions(smollm2):
    """A success (reward 3) and a failure (−1), both with the base model's behaviour logprobs."""
    model, tokenizer = smollm2
    return [with_behaviour(trajectory(GOOD, 3, session_id="good"), model, tokenizer),
            with_behaviour(trajectory(BAD, -1, session_id="bad"), model, tokenizer)]


def test_one_step_of_each_stage_leaves_adapter_value_head_version_report_and_merged_model(sessions, smollm2, tmp_path):
    out = tmp_path / "run"
    report = finetune(sessions, FinetuneOptions("smollm2-135m", out, lora_rank=4, max_steps=1, batch_size=2, merge=True))
    assert [(s.stage, s.step) for s in report.steps] == [("rft", 1), ("critic", 2), ("ppo", 3)]
    ppo = report.steps[-1]
    assert ppo.kl is not None and ppo.clip_fraction is not None and ppo.entropy > 0 and ppo.reward == 1.0
    assert report.sessions.rft == 1 and report.sessions.ppo == 2 and report.sessions.without_logprobs == 0
    assert re.fullmatch(r"ppo-step3-[0-9a-f]{12}", report.version)
    assert (out / "VERSION").read_text().strip() == report.version
    assert (out / "adapter" / "adapter_model.safetensors").is_file() and (out / "value_head.safetensors").is_file()
    saved = json.loads((out / "report.json").read_text())
    assert saved["version"] == report.version and [s["stage"] for s in saved["stages"]] == ["rft", "critic", "ppo"]
    assert "![" in (out / "report.md").read_text() and (out / "metrics.png").stat().st_size > 0

    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    ids = torch.tensor([[1, 9690, 198, 4093, 2]])
    merged = AutoModelForCausalLM.from_pretrained(out / "merged")
    adapted = PeftModel.from_pretrained(load_pretrained("smollm2-135m", device="cpu")[0], out / "adapter")
    with torch.no_grad():
        torch.testing.assert_close(merged(ids).logits, adapted(ids).logits, atol=1e-4, rtol=1e-4)
        assert not torch.allclose(smollm2[0](ids).logits, adapted(ids).logits), "the adapter changed the model"


def test_the_adapter_is_made_without_deprecation_warnings_the_user_cannot_act_on(finetune_extra, tmp_path):
    """transformers 5 renamed gradient checkpointing and peft reads the old name: `finetune` printed two
    FutureWarnings about calls the user never made. Checkpointing itself stays on."""
    model, _ = load_pretrained("smollm2-135m", device="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with_adapter(model, FinetuneOptions("smollm2-135m", tmp_path, lora_rank=4))
    assert [str(w.message) for w in caught if issubclass(w.category, FutureWarning)] == []
    assert any(getattr(module, "gradient_checkpointing", False) for module in model.modules())


def test_lora_weights_change_and_base_weights_do_not(sessions, tmp_path):
    model, tokenizer = load_pretrained("smollm2-135m", device="cpu")
    options = FinetuneOptions("smollm2-135m", tmp_path, stage="ppo", lora_rank=4, max_steps=1, batch_size=2)
    ranks = distributed.start()
    adapted = with_adapter(model, options)
    before = {name: p.detach().clone() for name, p in adapted.named_parameters()}
    samples = [tokenise(s, tokenizer, stop_token_ids(tokenizer)) for s in sessions]
    Trainer(adapted, options, ranks).run({"ppo": samples})
    changed = {name for name, p in adapted.named_parameters() if not torch.equal(p, before[name])}
    lora = {name for name in before if "lora_" in name}
    assert changed and changed <= lora
    assert {name for name in lora if "lora_B" in name} <= changed, "every adapted layer moved"


def test_the_rft_loss_is_the_likelihood_of_the_assistants_tokens_alone(sessions, smollm2, tmp_path):
    """System, user and tool tokens carry no loss: the first RFT step's loss (the adapter still the identity) is
    the mean negative log-likelihood of the response texts and their stop tokens, and of nothing else."""
    model, tokenizer = smollm2
    good = sessions[0]
    report = finetune([good], FinetuneOptions("smollm2-135m", tmp_path, stage="rft", lora_rank=4, max_steps=1))
    ids = tokenizer.apply_chat_template(good.conversation, tokenize=True, return_dict=False)
    targets = []
    for turn in good.turns:
        start = len(tokenizer.apply_chat_template(turn.context, tokenize=True, add_generation_prompt=True,
                                                  return_dict=False))
        targets += range(start, start + len(tokenizer.encode(turn.response["content"])) + 1)
    with torch.no_grad():
        logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0], -1)
    nll = -torch.stack([logprobs[t - 1, ids[t]] for t in targets]).mean()
    assert report.steps[0].tokens == len(targets)
    assert report.steps[0].loss == pytest.approx(nll.item(), rel=1e-4)


def test_resume_continues_at_the_saved_step_with_the_optimizer_state(sessions, tmp_path):
    rft = [trajectory(GOOD, 3, session_id="a"), trajectory(GOOD[1:], 2, session_id="b")]
    options = FinetuneOptions("smollm2-135m", tmp_path, stage="rft", lora_rank=4, max_steps=1, batch_size=1)
    first = finetune(rft, options)
    with pytest.raises(UsageError, match="already holds a run: --resume"):
        finetune(rft, options)
    resumed = finetune(rft, FinetuneOptions(**{**vars(options), "max_steps": 2, "resume": True}))
    assert [s.stage_step for s in resumed.steps] == [1, 2]
    assert resumed.steps[0].loss == pytest.approx(first.steps[0].loss, abs=1e-6)
    state = torch.load(tmp_path / "checkpoint" / "state.pt", weights_only=True)
    assert {int(s["step"]) for s in state["optimizer"]["state"].values()} == {2}, "Adam's moments carried over"


def test_nothing_to_resume_and_nothing_to_train_are_one_line_errors(tmp_path):
    with pytest.raises(UsageError, match="nothing to resume"):
        finetune([trajectory(GOOD, 3)], FinetuneOptions("smollm2-135m", tmp_path / "new", resume=True))
    with pytest.raises(UsageError, match="nothing to train on: .*ppo: no session has behaviour logprobs"):
        finetune([trajectory(GOOD, 3)], FinetuneOptions("smollm2-135m", tmp_path / "ppo", stage="ppo"))


def test_a_session_the_template_cannot_reproduce_is_skipped_with_one_line(sessions, tmp_path):
    good = sessions[0]
    trimmed = replace(good.turns[1], context=good.turns[1].context[:2])
    broken = replace(good, log_path=tmp_path / "broken.jsonl", turns=(good.turns[0], trimmed))
    said = []
    report = finetune([broken, sessions[1], good], FinetuneOptions("smollm2-135m", tmp_path / "run", stage="rft",
                                                                   lora_rank=4, max_steps=1), say=said.append)
    where = ("at token 30 it has 'Fuse the add into the relu' where the conversation has "
             "'Done: one kernel.<|im_end|>\\n'")
    line = f"skipped {broken.log_path}: turn 0's response is not a prefix of the whole conversation's tokens: {where}"
    assert said == [line]
    assert report.sessions.skipped == tuple(said) and report.sessions.rft == 1
