"""Every number the training recipe depends on, in one place (CUDA Agent's, DESIGN.md § Finetune), and the
options a user sets. report.json records both."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAGES = ("rft", "critic", "ppo")
"""In this order for `--stage all`: without the warm-ups CUDA Agent's PPO collapsed within ~20 steps."""

GAMMA = 1.0
LAMBDA = 0.95
"""GAE: no discount within a session (its reward comes once, at the end), λ trades the critic's bias for variance."""

UNEVALUATED_REWARD = -1
"""The result of a session that never had a candidate evaluated: it produced no verified kernel, CUDA Agent's −1."""

SHAPING_DISCOUNT = 0.9
"""`--reward-shaping`: each turn earns its own attempts' reward; credit crossing a turn boundary is
discounted by this, so an attempt is credited mostly with what it and the next few turns earned."""

CLIP_LOW = 0.2
CLIP_HIGH = 0.28
"""The clipped surrogate's ratio bounds 1 − 0.2 … 1 + 0.28 ("clip-higher": rare tokens can grow further
than they can shrink, which keeps entropy from collapsing)."""

IMPORTANCE_CAP = 2.0
"""Truncated importance weight π_old / π_behaviour: the logged tokens came from another policy (the model as it
was, another sampler); weights above the cap are cut so one unlikely token cannot dominate a step."""

KL_COEF = 0.02
"""Penalty on the k3 estimate of KL(π ‖ π_base), the base being the model with its adapter disabled."""

PPO_EPOCHS = 2
"""Passes over each PPO batch; the first runs at ratio 1, the clip acts from the second."""

CRITIC_MAX_STEPS = 50
"""The critic warm-up stops once explained variance is positive, or after this many steps."""

CRITIC_LR = 1e-3
"""The value head is one linear layer over frozen features: it takes a much larger step than the adapter."""

MAX_GRAD_NORM = 1.0
CHECKPOINT_EVERY = 10
"""Steps between checkpoints (and at the end of every stage)."""


@dataclass(frozen=True)
class FinetuneOptions:
    """What the user asked for on the command line."""

    base_model: str
    out: Path
    stage: str = "all"
    lora_rank: int = 16
    epochs: int = 1
    max_steps: int | None = None
    """Steps per stage at most (the critic's default is CRITIC_MAX_STEPS)."""
    lr: float = 1e-4
    batch_size: int = 4
    """Sessions per optimizer step, over all ranks."""
    reward_shaping: bool = False
    importance_cap: float = IMPORTANCE_CAP
    seed: int = 0
    resume: bool = False
    merge: bool = False
    fsdp: bool = False
    """Shard the base model over the processes (FSDP2) rather than hold it whole in each: for a base too large for
    one device. Nothing to shard over in one process."""

    @property
    def stages(self) -> tuple[str, ...]:
        return STAGES if self.stage == "all" else (self.stage,)

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "out": str(self.out)}


def recipe_json() -> dict[str, float]:
    """The constants above, as report.json records them."""
    return {"gamma": GAMMA, "lambda": LAMBDA, "unevaluated_reward": UNEVALUATED_REWARD,
            "shaping_discount": SHAPING_DISCOUNT, "clip_low": CLIP_LOW,
            "clip_high": CLIP_HIGH, "kl_coef": KL_COEF, "ppo_epochs": PPO_EPOCHS,
            "critic_max_steps": CRITIC_MAX_STEPS, "critic_lr": CRITIC_LR, "max_grad_norm": MAX_GRAD_NORM}
