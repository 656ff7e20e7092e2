"""The logprob convention that generation (`--model local:`) records and training recomputes:

    logprobs[i] = log_softmax(logits_i / T)[token_ids[i]]

logits_i: the model's raw logits for the i-th generated position; T: the sampling temperature, where T of 0 or None
(greedy decoding) is taken as 1. top_p and top_k shape what is sampled but are not applied to the logprobs, so the
behaviour logprobs and the trainer's stay comparable token by token (PPO's importance weights, truncated, absorb
the difference truncation makes).
"""

from __future__ import annotations

from typing import Any

import torch


def logprob_temperature(sampling: dict[str, Any]) -> float:
    """T of the convention for a turn sampled with `sampling` (a `ModelTurn.sampling`)."""
    return float(sampling.get("temperature") or 1.0)


def token_logprobs(logits: torch.Tensor, token_ids: torch.Tensor, temperature: float | torch.Tensor) -> torch.Tensor:
    """logits (..., n, vocab), token_ids (..., n) → the tokens' logprobs (..., n), float32. `temperature`: one for all,
    or (..., n, 1), each token's own (a trajectory's turns may be sampled at different ones)."""
    logprobs = torch.log_softmax(logits.float() / temperature, dim=-1)
    return logprobs.gather(-1, token_ids.unsqueeze(-1)).squeeze(-1)
