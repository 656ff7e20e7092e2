"""The per-token losses of each stage. Tensors are 1-D over one sample's response tokens (float32); the trainer
sums them and divides by the step's token count over all ranks (loss normalised by tokens, not sessions)."""

from __future__ import annotations

import torch

from kernelpilot.finetune.recipe import CLIP_HIGH, CLIP_LOW


def policy_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, behaviour_logprobs: torch.Tensor,
                advantages: torch.Tensor, importance_cap: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, clipped) per token: PPO's clipped surrogate with clip-higher, weighted by the truncated importance
    weight min(π_old / π_behaviour, cap) that corrects for the logged tokens coming from another policy."""
    ratio = torch.exp(logprobs - old_logprobs)
    weight = torch.exp(old_logprobs - behaviour_logprobs).clamp(max=importance_cap).detach()
    unclipped = ratio * advantages
    clipped = ratio.clamp(1 - CLIP_LOW, 1 + CLIP_HIGH) * advantages
    return -weight * torch.minimum(unclipped, clipped), clipped < unclipped


def kl_to_base(logprobs: torch.Tensor, base_logprobs: torch.Tensor) -> torch.Tensor:
    """k3 = exp(d) − d − 1 with d = log π_base − log π: an unbiased, never-negative per-token estimate of
    KL(π ‖ π_base) from the sampled tokens alone (no full-vocabulary logits kept). The loss adds KL_COEF × it."""
    diff = base_logprobs - logprobs
    return torch.exp(diff) - diff - 1


def value_loss(values: torch.Tensor, returns: torch.Tensor) -> torch.Tensor:
    return 0.5 * (values - returns) ** 2
