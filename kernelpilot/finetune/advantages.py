"""Rewards on a sample's response tokens, and GAE over them.

Only the model's own tokens are steps: the tool output between two responses is the environment's move, so the
GAE recursion runs from the last token of one response straight to the first of the next.
All tensors here are 1-D over the sample's response tokens, in order (n = sample.response_tokens), float32.
"""

from __future__ import annotations

import torch

from kernelpilot.finetune.recipe import (
    GAMMA,
    LAMBDA,
    SHAPING_DISCOUNT,
    UNEVALUATED_REWARD,
)
from kernelpilot.finetune.tokenise import Sample


def session_reward(sample: Sample) -> float:
    """The session's milestone reward; UNEVALUATED_REWARD when it never had a candidate evaluated."""
    return float(UNEVALUATED_REWARD if sample.reward is None else sample.reward)


def token_rewards(sample: Sample, shaping: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(reward, discount) per response token.

    Default: the session's milestone reward on its last token, discount 1 throughout. Shaped: each turn's best
    attempt reward on that turn's last token (0 for a turn that evaluated nothing), and SHAPING_DISCOUNT on the
    step from one turn to the next; a session that evaluated nothing still ends on UNEVALUATED_REWARD.
    """
    lengths = [r.end - r.start for r in sample.responses]
    rewards = torch.zeros(sum(lengths))
    discounts = torch.full_like(rewards, GAMMA)
    ends = torch.tensor(lengths).cumsum(0) - 1
    if shaping and sample.reward is not None:
        rewards[ends] = torch.tensor([float(max(r.rewards, default=0)) for r in sample.responses])
        discounts[ends[:-1]] = SHAPING_DISCOUNT
    else:
        rewards[-1] = session_reward(sample)
    return rewards, discounts


def gae(rewards: torch.Tensor, values: torch.Tensor, discounts: torch.Tensor, lam: float = LAMBDA
        ) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, returns) by generalised advantage estimation; the state after the last token is terminal."""
    next_values = torch.cat([values[1:], values.new_zeros(1)])
    deltas = rewards + discounts * next_values - values
    advantages = torch.empty_like(deltas)
    running = deltas.new_zeros(())
    for t in range(len(deltas) - 1, -1, -1):
        running = deltas[t] + discounts[t] * lam * running
        advantages[t] = running
    return advantages, advantages + values


def explained_variance(sums: torch.Tensor) -> float:
    """1 − Var(returns − values) / Var(returns) from `variance_sums` added up over samples (and ranks);
    nan when the returns do not vary (nothing to explain)."""
    count, ret, ret_sq, err, err_sq = sums.tolist()
    var_returns = ret_sq / count - (ret / count) ** 2
    var_errors = err_sq / count - (err / count) ** 2
    return 1.0 - var_errors / var_returns if var_returns > 1e-8 else float("nan")


def variance_sums(values: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
    """What explained_variance needs, as sums that add across samples and ranks."""
    errors = returns - values
    return torch.stack([torch.tensor(float(len(values))), returns.sum(), (returns ** 2).sum(),
                        errors.sum(), (errors ** 2).sum()]).double()
