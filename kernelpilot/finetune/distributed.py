"""Data parallelism under `torchrun` / `accelerate launch`: one process per device, sessions split between them.

Gradients are summed by hand rather than through DistributedDataParallel: a rank may hold fewer sessions of a
step than another (even none), the adapter and the value head are separate modules, and the base model runs
a second time with the adapter disabled; the trainable tensors are small, so one flat all-reduce per step costs
little, and the sum over ranks of token-normalised losses equals one process's loss on the whole batch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Ranks:
    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        """Only this rank writes outputs and prints."""
        return self.rank == 0

    def shard(self, items: list) -> list:
        return items[self.rank::self.world]


def start() -> Ranks:
    """This process's place: joins the process group that the launcher's environment describes (gloo on the
    CPU, nccl on GPUs), or a world of one."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    return Ranks(dist.get_rank() if world > 1 else 0, world, device)


def all_sum(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor` summed over ranks, in place (through the GPU when the backend is nccl, which reduces no host memory)."""
    if not dist.is_initialized():
        return tensor
    on_backend = tensor.cuda() if dist.get_backend() == "nccl" else tensor
    dist.all_reduce(on_backend)
    return tensor.copy_(on_backend)


def sum_gradients(params: list[torch.nn.Parameter]) -> None:
    """Every rank's gradients of `params` summed into each (a rank that saw no tokens contributes zeros)."""
    if not dist.is_initialized():
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    for param, chunk in zip(params, flat.split([g.numel() for g in grads])):
        param.grad = chunk.view_as(param).clone()


def barrier() -> None:
    if dist.is_initialized():
        dist.barrier()


def stop() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
