"""Offline PPO on logged sessions with CUDA Agent's recipe (DESIGN.md § Finetune): rejection finetuning on the
good sessions, a critic warm-up, then clipped PPO against the recorded behaviour logprobs.

One optimizer step takes `batch_size` sessions, split between ranks; each session is one sequence (no padding),
its gradients accumulated; losses are summed over response tokens and divided by the step's token count over
all ranks, so N processes compute exactly what one would. transformers and peft are imported here, lazily.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from kernelpilot.errors import UsageError
from kernelpilot.finetune import checkpoint, distributed
from kernelpilot.finetune.advantages import (
    explained_variance,
    gae,
    session_reward,
    token_rewards,
    variance_sums,
)
from kernelpilot.finetune.objectives import kl_to_base, policy_loss, value_loss
from kernelpilot.finetune.policy import behaviour_logprobs, hidden_states, view
from kernelpilot.finetune.pretrained import import_peft, load_pretrained, peft_wrapping
from kernelpilot.finetune.recipe import (
    CHECKPOINT_EVERY,
    CRITIC_LR,
    CRITIC_MAX_STEPS,
    KL_COEF,
    MAX_GRAD_NORM,
    PPO_EPOCHS,
    STAGES,
    FinetuneOptions,
    recipe_json,
)
from kernelpilot.finetune.report import (
    FinetuneReport,
    Sessions,
    StageOutcome,
    StepMetrics,
    write,
)
from kernelpilot.finetune.tokenise import (
    Sample,
    SessionSkipped,
    stop_token_ids,
    tokenise,
)
from kernelpilot.finetune.trajectory import Trajectory
from kernelpilot.finetune.value_head import ValueHead
from kernelpilot.paths import check_kind

Say = Callable[[str], None]


def eligible(stage: str, samples: Sequence[Sample]) -> list[Sample]:
    """The sessions a stage learns from: RFT imitates only clean successes; the critic learns from every session
    (one that evaluated nothing failed, UNEVALUATED_REWARD); PPO needs the behaviour logprobs of every response."""
    if stage == "rft":
        return [s for s in samples if (s.reward or 0) > 0 and s.tool_errors == 0]
    return list(samples) if stage == "critic" else [s for s in samples if s.has_behaviour_logprobs]


_NOTHING_FOR = {
    "rft": "no session has a positive reward without invalid tool calls",
    "critic": "no usable session",
    "ppo": "no session has behaviour logprobs (sessions without them train by RFT only)",
}


def finetune(trajectories: Sequence[Trajectory], options: FinetuneOptions,
             unreadable: Sequence[str] = (), say: Say = lambda line: None) -> FinetuneReport:
    """Train on `trajectories` as `options` say and write the outputs under options.out (rank 0).

    `unreadable`: one line per session log the caller could not read; `say` prints those and one line per
    session skipped here (on rank 0). Raises UsageError before any training when the base model, the output
    folder or the sessions cannot be used."""
    started = time.monotonic()
    ranks = distributed.start(options.fsdp)
    say = say if ranks.main else lambda line: None
    for line in unreadable:
        say(line)
    _check_out(options, ranks)
    if not trajectories:  # found out before loading a base model that would have nothing to learn from
        raise _nothing_to_train(len(unreadable), len(unreadable), ["no session log could be read"])
    import_peft()
    # A base to be sharded is loaded on the CPU: FSDP moves each rank's shards to its device.
    model, tokenizer = load_pretrained(options.base_model, device="cpu" if ranks.fsdp else str(ranks.device))
    if ranks.device.type == "cuda":
        model.to(torch.bfloat16)
    samples, skipped = _tokenise(trajectories, tokenizer, model, say)
    pools = {stage: eligible(stage, samples) for stage in options.stages}
    sessions = Sessions(read=len(trajectories) + len(unreadable), skipped=(*unreadable, *skipped),
                        rft=len(eligible("rft", samples)), critic=len(eligible("critic", samples)),
                        ppo=len(eligible("ppo", samples)),
                        without_logprobs=len(samples) - len(eligible("ppo", samples)))
    if not any(pools.values()):
        raise _nothing_to_train(sessions.read, len(sessions.skipped),
                                [f"{stage}: {_NOTHING_FOR[stage]}" for stage in options.stages])
    adapted = with_adapter(model, options)
    if ranks.fsdp:
        distributed.shard_model(adapted, decoder_layers(adapted), ranks)
    trainer = Trainer(adapted, options, ranks)
    trainer.run(pools)
    report = FinetuneReport(version="", base_model=options.base_model, device=str(ranks.device),
                            world_size=ranks.world, options=options.to_json(), recipe=recipe_json(),
                            sessions=sessions, stages=tuple(trainer.outcomes), steps=tuple(trainer.steps))
    adapter = distributed.trainable_state(trainer.model)
    if ranks.main:
        report = _write_outputs(trainer, adapter, tokenizer, report, started)
    distributed.barrier()
    distributed.stop()
    return report


def _nothing_to_train(read: int, skipped: int, reasons: list[str]) -> UsageError:
    """The counts are those of the report: every log named, and every one that was skipped, whatever skipped it."""
    return UsageError(f"nothing to train on: {read} sessions read, {skipped} skipped; {'; '.join(reasons)}")


def _check_out(options: FinetuneOptions, ranks: distributed.Ranks) -> None:
    check_kind(options.out, folder=True, flag="--out")
    if ranks.fsdp and options.merge:
        raise UsageError("--merge cannot merge into a sharded base: merge the saved adapter in one process instead "
                         "(peft's merge_and_unload)")
    if options.resume and not checkpoint.exists(options.out):
        raise UsageError(f"nothing to resume: {options.out} holds no checkpoint")
    if not options.resume and checkpoint.exists(options.out):
        raise UsageError(f"{options.out} already holds a run: --resume to continue it, or choose another --out")


def _tokenise(trajectories: Sequence[Trajectory], tokenizer: Any, model: Any, say: Say
              ) -> tuple[list[Sample], list[str]]:
    stop_ids = stop_token_ids(tokenizer, model.generation_config)
    limit = getattr(model.config, "max_position_embeddings", None)
    samples, skipped = [], []
    for trajectory in trajectories:
        try:
            samples.append(tokenise(trajectory, tokenizer, stop_ids, limit))
        except SessionSkipped as reason:
            skipped.append(f"skipped {trajectory.log_path}: {reason}")
            say(skipped[-1])
    return samples, skipped


def with_adapter(model: Any, options: FinetuneOptions) -> Any:
    """`model` wrapped in a LoRA adapter: a fresh one (every linear layer of the body, the same initial weights on
    every rank), or the checkpoint's on --resume. Activations are recomputed in the backward pass (gradient
    checkpointing): the shipped example sessions (3k tokens each) train SmolLM2-135M on the CPU in 6 GB instead of
    10, for a third more compute."""
    peft = import_peft()
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    else:  # older transformers: the name that newer ones deprecate
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    with peft_wrapping():
        if options.resume:
            adapted = peft.PeftModel.from_pretrained(model, checkpoint.folder(options.out) / checkpoint.ADAPTER,
                                                     is_trainable=True)
        else:
            torch.manual_seed(options.seed)
            adapted = peft.get_peft_model(model, peft.LoraConfig(
                r=options.lora_rank, lora_alpha=2 * options.lora_rank, lora_dropout=0.0, target_modules="all-linear",
                task_type="CAUSAL_LM"))
    adapted.train()
    for module in adapted.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0  # PPO's ratio compares two passes of the same weights: dropout would make it noise
    return adapted


def decoder_layers(model: Any) -> list[torch.nn.Module]:
    """The base's repeated blocks, the units FSDP gathers one at a time: the classes its transformers model names as
    never to be split between devices (`_no_split_modules`, what accelerate's FSDP wraps too)."""
    names = set(model.get_base_model()._no_split_modules or ())
    layers = [module for module in model.modules() if type(module).__name__ in names]
    if not layers:
        raise UsageError("--fsdp: the base model names no decoder layer class (_no_split_modules) to shard by")
    return layers


@dataclass(frozen=True)
class _Rollout:
    """What PPO fixes about a sample before updating on it (tensors over its response tokens)."""

    sample: Sample
    old_logprobs: torch.Tensor
    behaviour_logprobs: torch.Tensor
    base_logprobs: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    hidden: torch.Tensor
    entropy: torch.Tensor
    weight: float
    """1, or 0 for a pass that only keeps FSDP's collectives in step (`Trainer._passes`)."""


class Trainer:
    """The three stages on one adapted model, its value head and one optimizer, resumable step by step."""

    def __init__(self, model: Any, options: FinetuneOptions, ranks: distributed.Ranks) -> None:
        self.model, self.options, self.ranks = model, options, ranks
        self.device = ranks.device
        self.head = ValueHead(model.get_output_embeddings().in_features).to(self.device)
        # One root over both names every tensor of the optimizer's state, which is how it is saved.
        self.named = torch.nn.ModuleDict({"policy": model, "value_head": self.head})
        self.adapter_params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW([{"params": self.adapter_params, "lr": options.lr},
                                            {"params": list(self.head.parameters()), "lr": CRITIC_LR}],
                                           weight_decay=0.0)
        self.steps: list[StepMetrics] = []
        self.outcomes: list[StageOutcome] = []
        self.stage, self.stage_step = options.stages[0], 0
        self.critic_features: dict[int, torch.Tensor] = {}
        if options.resume:
            self._restore()

    def _restore(self) -> None:
        state = checkpoint.load_state(self.options.out)
        if state["base_model"] != self.options.base_model:
            raise UsageError(f"the checkpoint in {self.options.out} was trained from {state['base_model']!r}, "
                             f"not {self.options.base_model!r}")
        self.head.load(checkpoint.folder(self.options.out))
        distributed.load_optimizer_state(self.named, self.optimizer, state["optimizer"])
        self.steps = [StepMetrics.from_json(m) for m in state["steps"]]
        self.outcomes = [StageOutcome(**o) for o in state["outcomes"]]
        self.stage, self.stage_step = state["stage"], state["stage_step"]

    def _save(self) -> None:
        adapter = distributed.trainable_state(self.model)
        optimizer = distributed.optimizer_state(self.named, self.optimizer)
        if self.ranks.main:
            checkpoint.save(self.options.out, self.model, adapter, self.head, {
                "base_model": self.options.base_model, "stage": self.stage, "stage_step": self.stage_step,
                "steps": [m.to_json() for m in self.steps], "outcomes": [vars(o) for o in self.outcomes],
                "optimizer": optimizer})
        distributed.barrier()

    # -- the run -----------------------------------------------------------------------------------------------

    def run(self, pools: dict[str, list[Sample]]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        resumed_at = STAGES.index(self.stage) if self.stage in STAGES else 0
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=Console(stderr=True), disable=not self.ranks.main) as progress:
            for stage in self.options.stages:
                if STAGES.index(stage) < resumed_at or any(o.stage == stage and o.note.startswith("stopped")
                                                           for o in self.outcomes):
                    continue
                if stage != self.stage:
                    self.stage, self.stage_step = stage, 0
                self._run_stage(stage, pools[stage], progress)

    def _run_stage(self, stage: str, pool: list[Sample], progress: Any) -> None:
        self.outcomes = [o for o in self.outcomes if o.stage != stage]
        if not pool:
            self.outcomes.append(StageOutcome(stage, 0, f"skipped: {_NOTHING_FOR[stage]}"))
            return
        total = self._total_steps(stage, len(pool))
        task = progress.add_task(stage, total=total, completed=self.stage_step)
        note = f"ran {total} step{'s' * (total != 1)}"
        step = getattr(self, f"_{stage}_step")
        while self.stage_step < total:
            began = time.monotonic()
            batch = self._batch(stage, pool, self.stage_step)
            metrics = step(batch, self.ranks.shard(batch))
            self.stage_step += 1
            self.steps.append(StepMetrics(stage=stage, step=len(self.steps) + 1, stage_step=self.stage_step,
                                          seconds=time.monotonic() - began, **metrics))
            progress.update(task, advance=1, description=f"{stage} loss {metrics['loss']:.4f}")
            if stage == "critic" and metrics["explained_variance"] > 0:
                note = f"stopped at explained variance {metrics['explained_variance']:.3f} > 0"
                break
            if self.stage_step % CHECKPOINT_EVERY == 0:
                self._save()
        else:
            if stage == "critic":
                note = f"explained variance still ≤ 0 after {total} step{'s' * (total != 1)}"
        self.outcomes.append(StageOutcome(stage, self.stage_step, note))
        self._save()

    def _total_steps(self, stage: str, sessions: int) -> int:
        if stage == "critic":
            return self.options.max_steps or CRITIC_MAX_STEPS
        total = math.ceil(sessions / self.options.batch_size) * self.options.epochs
        return min(total, self.options.max_steps) if self.options.max_steps else total

    def _batch(self, stage: str, pool: list[Sample], stage_step: int) -> list[Sample]:
        """The sessions of a step: a fresh shuffle each epoch, the same on every rank and again on resume."""
        per_epoch = math.ceil(len(pool) / self.options.batch_size)
        epoch, index = divmod(stage_step, per_epoch)
        generator = torch.Generator().manual_seed(self.options.seed * 1_000_003 + STAGES.index(stage) * 10_007 + epoch)
        order = torch.randperm(len(pool), generator=generator)[index * self.options.batch_size:]
        return [pool[i] for i in order[:self.options.batch_size].tolist()]

    # -- one step of each stage; each returns its metrics, reduced over ranks ---------------------------------

    def _rft_step(self, batch: list[Sample], shard: list[Sample]) -> dict[str, float]:
        """Supervised finetuning on the model's tokens of good sessions (temperature 1: the distribution itself)."""
        tokens = self._tokens(shard)
        loss_sum = entropy_sum = 0.0
        for sample, weight in self._passes(shard, batch[0]):
            out = view(self.model, sample, self.device, at_temperature=False)
            loss = -out.logprobs.sum()
            (loss * weight / tokens).backward()
            loss_sum += weight * loss.item()
            entropy_sum += weight * out.entropy.sum().item()
        self._apply(self.adapter_params)
        sums = self._sum(loss=loss_sum, entropy=entropy_sum)
        return {"loss": sums["loss"] / tokens, "entropy": sums["entropy"] / tokens, "tokens": int(tokens),
                "reward": _mean_reward(batch)}

    def _critic_step(self, batch: list[Sample], shard: list[Sample]) -> dict[str, float]:
        """The value head regressed on GAE returns of its own values; the body is frozen in this stage, so each
        session's features are computed once and reused for every later step."""
        tokens = self._tokens(shard)
        loss_sum, variance = 0.0, torch.zeros(5, dtype=torch.float64)
        self._cache_features(shard, batch[0])
        for sample in shard:
            values = self.head(self.critic_features[id(sample)])
            with torch.no_grad():
                rewards, discounts = token_rewards(sample, self.options.reward_shaping)
                _, returns = gae(rewards.to(self.device), values.detach(), discounts.to(self.device))
            loss = value_loss(values, returns).sum()
            (loss / tokens).backward()
            loss_sum += loss.item()
            variance += variance_sums(values.detach().cpu(), returns.cpu())
        self._apply(list(self.head.parameters()))
        sums = self._sum(loss=loss_sum)
        return {"loss": sums["loss"] / tokens, "tokens": int(tokens), "reward": _mean_reward(batch),
                "explained_variance": explained_variance(distributed.all_sum(variance))}

    def _cache_features(self, shard: list[Sample], filler: Sample) -> None:
        """The features of the sessions in `shard` not seen yet (a filler's are true features too: kept as well)."""
        missing = [sample for sample in shard if id(sample) not in self.critic_features]
        with torch.no_grad():
            for sample, _ in self._passes(missing, filler):
                self.critic_features[id(sample)] = hidden_states(self.model, sample, self.device)

    def _ppo_step(self, batch: list[Sample], shard: list[Sample]) -> dict[str, float]:
        """PPO_EPOCHS passes of the clipped, importance-weighted surrogate plus the KL penalty and the value loss."""
        tokens = self._tokens(shard)
        rollouts = [self._rollout(sample, weight) for sample, weight in self._passes(shard, batch[0])]
        variance = sum((r.weight * variance_sums(self.head(r.hidden).detach().cpu(), r.returns.cpu())
                        for r in rollouts), torch.zeros(5, dtype=torch.float64))
        loss_sum = kl_sum = clipped_sum = 0.0
        for _ in range(PPO_EPOCHS):
            for rollout in rollouts:
                out = view(self.model, rollout.sample, self.device)
                surrogate, clipped = policy_loss(out.logprobs, rollout.old_logprobs, rollout.behaviour_logprobs,
                                                 rollout.advantages, self.options.importance_cap)
                kl = kl_to_base(out.logprobs, rollout.base_logprobs)
                loss = (surrogate + KL_COEF * kl + value_loss(self.head(rollout.hidden), rollout.returns)).sum()
                (loss * rollout.weight / tokens).backward()
                loss_sum += rollout.weight * loss.item()
                kl_sum += rollout.weight * kl.sum().item()
                clipped_sum += rollout.weight * clipped.sum().item()
            self._apply([*self.adapter_params, *self.head.parameters()])
        entropy_sum = sum(r.weight * r.entropy.sum().item() for r in rollouts)
        sums = self._sum(loss=loss_sum, kl=kl_sum, clipped=clipped_sum, entropy=entropy_sum)
        passes = tokens * PPO_EPOCHS
        return {"loss": sums["loss"] / passes, "kl": sums["kl"] / passes, "clip_fraction": sums["clipped"] / passes,
                "entropy": sums["entropy"] / tokens, "tokens": int(tokens), "reward": _mean_reward(batch),
                "explained_variance": explained_variance(distributed.all_sum(variance))}

    def _rollout(self, sample: Sample, weight: float) -> _Rollout:
        with torch.no_grad():
            with self.model.disable_adapter():
                base = view(self.model, sample, self.device).logprobs
            now = view(self.model, sample, self.device, hidden=True)
            rewards, discounts = token_rewards(sample, self.options.reward_shaping)
            advantages, returns = gae(rewards.to(self.device), self.head(now.hidden), discounts.to(self.device))
        return _Rollout(sample, now.logprobs, behaviour_logprobs(sample).to(self.device), base, advantages,
                        returns, now.hidden, now.entropy, weight)

    # -- helpers ---------------------------------------------------------------------------------------------

    def _passes(self, shard: list[Sample], filler: Sample) -> list[tuple[Sample, float]]:
        """`shard`'s sessions at weight 1, then under FSDP as many passes over `filler` at weight 0 as make this
        rank's count the largest any rank has: a sharded model's every forward and backward pass is a collective."""
        padding = distributed.most(len(shard)) - len(shard) if self.ranks.fsdp else 0
        return [(sample, 1.0) for sample in shard] + [(filler, 0.0)] * padding

    def _tokens(self, shard: list[Sample]) -> float:
        """The step's response tokens over all ranks: every loss is divided by it."""
        return distributed.all_sum(torch.tensor(float(sum(s.response_tokens for s in shard)))).item()

    def _sum(self, **values: float) -> dict[str, float]:
        totals = distributed.all_sum(torch.tensor(list(values.values()), dtype=torch.float64))
        return dict(zip(values, totals.tolist()))

    def _apply(self, params: list[torch.nn.Parameter]) -> None:
        distributed.sum_gradients(params)
        distributed.clip_grad_norm(params, MAX_GRAD_NORM)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def _write_outputs(trainer: Trainer, adapter_state: dict[str, torch.Tensor], tokenizer: Any, report: FinetuneReport,
                   started: float) -> FinetuneReport:
    """The adapter (`adapter_state`, gathered), the value head, the version id, a merged model on request, and the
    report, under --out."""
    out = trainer.options.out
    adapter = out / "adapter"
    trainer.model.save_pretrained(adapter, state_dict=adapter_state)
    head = trainer.head.save(out)
    last = trainer.steps[-1]
    digest = hashlib.sha256()
    for path in (*sorted(adapter.glob("*.safetensors")), head):
        digest.update(path.read_bytes())
    version = f"{last.stage}-step{last.step}-{digest.hexdigest()[:12]}"
    (out / "VERSION").write_text(version + "\n")
    outputs = {"adapter": str(adapter), "value_head": str(head), "checkpoint": str(checkpoint.folder(out)),
               "report": str(out / "report.md")}
    if trainer.options.merge:
        merged = out / "merged"
        trainer.model.merge_and_unload().save_pretrained(merged)
        tokenizer.save_pretrained(merged)
        outputs["merged"] = str(merged)
    report = dataclasses.replace(report, version=version, outputs=outputs, seconds=time.monotonic() - started)
    write(report, out)
    return report


def _mean_reward(batch: list[Sample]) -> float:
    return sum(map(session_reward, batch)) / len(batch)
