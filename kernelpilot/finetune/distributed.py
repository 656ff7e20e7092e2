"""Data parallelism under `torchrun` / `accelerate launch`: one process per device, sessions split between them.

Gradients are summed by hand rather than through DistributedDataParallel: a rank may hold fewer sessions of a
step than another (even none), the adapter and the value head are separate modules, and the base model runs
a second time with the adapter disabled; the trainable tensors are small, so one flat all-reduce per step costs
little, and the sum over ranks of token-normalised losses equals one process's loss on the whole batch.

With `--fsdp` the model is sharded with FSDP2 instead (a base too large for one device): its parameters become
DTensors, its backward pass reduces their gradients itself, and every forward and backward pass is a collective
that all ranks must join, as many times each (the trainer pads a rank's passes, `Trainer._passes`). Saving goes
through torch.distributed.checkpoint's full state dicts, which gather the shards, in both modes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    set_optimizer_state_dict,
)
from torch.distributed.tensor import DTensor

_GATHERED = StateDictOptions(full_state_dict=True, cpu_offload=True, ignore_frozen_params=True)
"""Whole tensors on rank 0's CPU ({} on the others), trainable ones only: the frozen base is never gathered."""


@dataclass(frozen=True)
class Ranks:
    rank: int
    world: int
    device: torch.device
    fsdp: bool = False
    """The model is sharded over the ranks (asked for, and more than one of them)."""

    @property
    def main(self) -> bool:
        """Only this rank writes outputs and prints."""
        return self.rank == 0

    def shard(self, items: list) -> list:
        return items[self.rank::self.world]


def start(fsdp: bool = False) -> Ranks:
    """This process's place: joins the process group that the launcher's environment describes (gloo on the
    CPU, nccl on GPUs), or a world of one (where `fsdp` has nothing to shard over)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    return Ranks(dist.get_rank() if world > 1 else 0, world, device, fsdp and world > 1)


def shard_model(model: torch.nn.Module, layers: list[torch.nn.Module], ranks: Ranks) -> None:
    """FSDP2 over each of `layers` and the root, in place: a layer's weights are gathered only while it runs.
    Parameters still on the CPU move to `ranks.device` shard by shard, so a base can be loaded on the CPU and
    never whole on the GPU. Gradients are summed, not averaged (the losses are normalised by the token count of all
    ranks), with plain SUM collectives: gloo has no PREMUL_SUM."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(ranks.device.type, (ranks.world,))
    for module in (*layers, model):
        sharded = fully_shard(module, mesh=mesh)
        sharded.set_gradient_divide_factor(1.0)
        sharded.set_force_sum_reduction_for_comms(True)


def all_sum(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` summed over ranks, in place."""
    return _all_reduce(tensor, dist.ReduceOp.SUM)


def most(count: int) -> int:
    """The largest `count` of any rank."""
    return int(_all_reduce(torch.tensor(count), dist.ReduceOp.MAX).item())


def _all_reduce(tensor: torch.Tensor, op: dist.ReduceOp.RedOpType) -> torch.Tensor:
    """`tensor` reduced over ranks in place (through the GPU when the backend is nccl, which reduces no host memory)."""
    if not dist.is_initialized():
        return tensor
    on_backend = tensor.cuda() if dist.get_backend() == "nccl" else tensor
    dist.all_reduce(on_backend, op=op)
    return tensor.copy_(on_backend)


def sum_gradients(params: list[torch.nn.Parameter]) -> None:
    """Every rank's gradients of `params` summed into each (a rank that saw no tokens contributes zeros). FSDP's
    parameters (DTensors) are left out: its backward pass summed their gradients already."""
    params = [p for p in params if not isinstance(p, DTensor)]
    if not dist.is_initialized() or not params:
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    for param, chunk in zip(params, flat.split([g.numel() for g in grads])):
        param.grad = chunk.view_as(param).clone()


def clip_grad_norm(params: list[torch.nn.Parameter], max_norm: float) -> None:
    """torch's clip_grad_norm_ over parameters some of which may be FSDP's DTensors and the rest plain (the value
    head): torch refuses the mix, so each kind's norm is taken apart, a DTensor's over all its shards."""
    with_grad = [p for p in params if p.grad is not None]
    kinds = [kind for kind in ([p for p in with_grad if isinstance(p, DTensor)],
                               [p for p in with_grad if not isinstance(p, DTensor)]) if kind]
    norms = [torch.nn.utils.get_total_norm([p.grad for p in kind]) for kind in kinds]
    total = torch.linalg.vector_norm(torch.stack([n.full_tensor() if isinstance(n, DTensor) else n for n in norms]))
    for kind in kinds:
        torch.nn.utils.clip_grads_with_norm_(kind, max_norm, total)


def trainable_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """`model`'s trainable tensors by name, whole, on rank 0 ({} on the others); every rank must call it."""
    return get_model_state_dict(model, options=_GATHERED)


def optimizer_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """`optimizer`'s state keyed by the names of `model`'s parameters, whole, on rank 0 ({} on the others); every
    rank must call it."""
    return get_optimizer_state_dict(model, optimizer, options=_GATHERED)


def load_optimizer_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """What `optimizer_state` returned, read on every rank, back into `optimizer` (each rank keeps its shards).

    A parameter that never took a step (the value head after RFT alone) has no saved state; torch invents one for
    it (a step at learning rate 0), which is dropped so that its first real step is still Adam's first."""
    params = dict(model.named_parameters())
    set_optimizer_state_dict(model, optimizer, state, options=StateDictOptions(full_state_dict=True, strict=False))
    for name in params.keys() - state["state"].keys():
        optimizer.state.pop(params[name], None)


def barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def stop() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
