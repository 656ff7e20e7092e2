"""PPO learns from rewards: after a few steps the rewarded response is likelier and the punished one less likely."""

from __future__ import annotations

import torch

from kernelpilot.finetune import distributed
from kernelpilot.finetune.pretrained import load_pretrained
from kernelpilot.finetune.recipe import FinetuneOptions
from kernelpilot.finetune.tokenise import stop_token_ids, tokenise
from kernelpilot.finetune.trainer import Trainer, with_adapter

from .sessions import trajectory, with_behaviour

REWARDED = "Fuse the add into the relu kernel."
PUNISHED = "Call torch.relu instead."


def response_logprob(model, tokenizer, session) -> float:
    """log π(response | context) at the session's sampling temperature, by a plain forward pass."""
    turn = session.turns[0]
    ids = turn.token_ids
    prompt = tokenizer.apply_chat_template(turn.context, tokenize=True, add_generation_prompt=True, return_dict=False)
    with torch.no_grad():
        logits = model(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1:-1]
    return torch.log_softmax(logits / turn.sampling["temperature"], -1)[torch.arange(len(ids)), ids].sum().item()


def test_ppo_raises_the_rewarded_response_and_lowers_the_punished_one(tmp_path):
    model, tokenizer = load_pretrained("smollm2-135m", device="cpu")
    good = with_behaviour(trajectory([REWARDED], 3, session_id="good"), model, tokenizer)
    bad = with_behaviour(trajectory([PUNISHED], -1, session_id="bad"), model, tokenizer)
    before = [response_logprob(model, tokenizer, s) for s in (good, bad)]

    options = FinetuneOptions("smollm2-135m", tmp_path, stage="ppo", lora_rank=4, lr=5e-4, max_steps=3, epochs=3,
                              batch_size=2)
    ranks = distributed.start()
    adapted = with_adapter(model, options)
    trainer = Trainer(adapted, options, ranks)
    trainer.run({"ppo": [tokenise(s, tokenizer, stop_token_ids(tokenizer)) for s in (good, bad)]})
    after = [response_logprob(adapted, tokenizer, s) for s in (good, bad)]

    assert after[0] > before[0] + 0.5, (before, after)
    assert after[1] < before[1] - 0.5, (before, after)
    assert all(step.kl >= 0 for step in trainer.steps)
