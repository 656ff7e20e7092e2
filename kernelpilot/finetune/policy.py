"""The model's view of one sample: logprobs, entropy and hidden states at its response tokens.

The language-model head runs only where a response token is predicted (`logits_to_keep`): a session's tool
output and prompts cost a forward pass through the body, never vocabulary-sized logits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernelpilot.finetune.logprobs import token_logprobs
from kernelpilot.finetune.tokenise import Sample

ENTROPY_CHUNK = 256
"""Response tokens per chunk when measuring entropy (a [chunk, vocabulary] softmax at a time)."""


@dataclass(frozen=True)
class TokenView:
    """Tensors over the sample's n response tokens, in order."""

    logprobs: torch.Tensor
    """[n] float32, log π(token | prefix) at the token's sampling temperature (`finetune.logprobs`' convention, the
    one `local:` records); carries gradient when enabled."""
    entropy: torch.Tensor
    """[n] float32, the policy's entropy at each step (a metric: no gradient)."""
    hidden: torch.Tensor | None
    """[n, hidden] float32, the last hidden state each token was predicted from (detached), when asked for."""


def positions(sample: Sample) -> torch.Tensor:
    """[n] int64: where the response tokens sit in sample.input_ids."""
    return torch.cat([torch.arange(r.start, r.end) for r in sample.responses])


def temperatures(sample: Sample) -> torch.Tensor:
    """[n] float32: each response token's sampling temperature."""
    return torch.cat([torch.full((r.end - r.start,), r.temperature) for r in sample.responses])


def behaviour_logprobs(sample: Sample) -> torch.Tensor:
    """[n] float32: the logged logprobs of the policy that sampled the tokens (sample.has_behaviour_logprobs)."""
    return torch.tensor([lp for r in sample.responses for lp in r.behaviour_logprobs], dtype=torch.float32)


def view(model: Any, sample: Sample, device: torch.device, *, hidden: bool = False,
         at_temperature: bool = True) -> TokenView:
    """One forward pass over `sample`. `at_temperature=False` reads the logprobs at temperature 1 (what
    supervised finetuning fits)."""
    input_ids = torch.tensor(sample.input_ids, device=device)[None]
    where = positions(sample).to(device)
    output = model(input_ids=input_ids, logits_to_keep=where - 1, output_hidden_states=hidden, use_cache=False)
    temperature = temperatures(sample).to(device)[:, None] if at_temperature else 1.0
    logits = output.logits[0]
    logprobs = token_logprobs(logits, input_ids[0, where], temperature)
    with torch.no_grad():
        scaled = logits.detach().float() / temperature
        entropy = torch.cat([torch.distributions.Categorical(logits=chunk).entropy()
                             for chunk in scaled.split(ENTROPY_CHUNK)])
    states = output.hidden_states[-1][0, where - 1].detach().float() if hidden else None
    return TokenView(logprobs, entropy, states)


def hidden_states(model: Any, sample: Sample, device: torch.device) -> torch.Tensor:
    """[n, hidden] float32: what `view(..., hidden=True).hidden` holds, without the head's logits (the critic's
    warm-up needs the features alone)."""
    input_ids = torch.tensor(sample.input_ids, device=device)[None]
    output = model(input_ids=input_ids, logits_to_keep=1, output_hidden_states=True, use_cache=False)
    return output.hidden_states[-1][0, positions(sample).to(device) - 1].detach().float()
