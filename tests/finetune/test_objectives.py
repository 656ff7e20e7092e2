"""The recipe's arithmetic, on numbers worked by hand: rewards on tokens, GAE, the clipped surrogate, KL."""

from __future__ import annotations

import math

import pytest
import torch

from kernelpilot.finetune.advantages import (
    explained_variance,
    gae,
    token_rewards,
    variance_sums,
)
from kernelpilot.finetune.objectives import kl_to_base, policy_loss
from kernelpilot.finetune.recipe import SHAPING_DISCOUNT
from kernelpilot.finetune.tokenise import Response, Sample


def two_turn_sample() -> Sample:
    """Responses of 2 and 3 tokens; the first turn's attempt failed (−1), the second's earned 3 then 1."""
    return Sample("s", "s.jsonl", tuple(range(10)),
                  (Response(0, 1, 3, 1.0, None, (-1,)), Response(1, 5, 8, 1.0, None, (3, 1))), reward=3, tool_errors=0)


def test_the_session_reward_lands_on_its_last_token():
    rewards, discounts = token_rewards(two_turn_sample(), shaping=False)
    assert rewards.tolist() == [0, 0, 0, 0, 3]
    assert discounts.tolist() == [1] * 5


def test_shaping_rewards_each_turn_and_discounts_across_turns():
    rewards, discounts = token_rewards(two_turn_sample(), shaping=True)
    assert rewards.tolist() == [0, -1, 0, 0, 3]
    assert discounts.tolist() == pytest.approx([1, SHAPING_DISCOUNT, 1, 1, 1])


def test_gae_with_gamma_one_and_lambda_095():
    rewards, ones = torch.tensor([0.0, 0.0, 1.0]), torch.ones(3)
    advantages, returns = gae(rewards, torch.zeros(3), ones)
    assert advantages.tolist() == pytest.approx([0.9025, 0.95, 1.0])
    advantages, returns = gae(rewards, torch.full((3,), 0.5), ones)
    assert advantages.tolist() == pytest.approx([0.45125, 0.475, 0.5])
    assert returns.tolist() == pytest.approx([0.95125, 0.975, 1.0])


def test_the_surrogate_clips_at_08_below_and_128_above():
    old = torch.zeros(3)
    logprobs = torch.log(torch.tensor([1.5, 0.5, 0.9])).requires_grad_()
    advantages = torch.tensor([1.0, -1.0, 1.0])
    loss, clipped = policy_loss(logprobs, old, old, advantages, importance_cap=2.0)
    assert loss.tolist() == pytest.approx([-1.28, 0.8, -0.9])
    assert clipped.tolist() == [True, True, False]
    loss.sum().backward()
    assert logprobs.grad.tolist()[:2] == [0.0, 0.0], "a clipped token pushes no further"


def test_importance_weights_are_truncated_at_the_cap():
    old, advantages = torch.zeros(2), torch.ones(2)
    behaviour = torch.log(torch.tensor([0.5, 1 / 3]))  # π_old / π_behaviour = 2 and 3
    loss, _ = policy_loss(old.clone(), old, behaviour, advantages, importance_cap=2.0)
    assert loss.tolist() == pytest.approx([-2.0, -2.0])


def test_kl_estimate_is_zero_at_the_base_and_positive_elsewhere():
    logprobs = torch.log(torch.tensor([0.2, 0.5]))
    assert kl_to_base(logprobs, logprobs).tolist() == [0.0, 0.0]
    assert (kl_to_base(logprobs, torch.log(torch.tensor([0.4, 0.1]))) > 0).all()


def test_explained_variance():
    returns = torch.tensor([1.0, 2.0, 4.0])
    assert explained_variance(variance_sums(returns, returns)) == pytest.approx(1.0)
    assert explained_variance(variance_sums(torch.zeros(3), returns)) == pytest.approx(0.0)
    halves = variance_sums(torch.zeros(1), returns[:1]) + variance_sums(returns[1:], returns[1:])
    assert 0 < explained_variance(halves) < 1, "sums from several samples (or ranks) add up"
    assert math.isnan(explained_variance(variance_sums(torch.zeros(3), torch.ones(3))))
