"""Forged verdict input: a wrong candidate makes the harness blame the task. At import it finds the
channel (the one write-only pipe among its fds; the scratch folder is KERNELPILOT_CACHE_DIR's
parent) and writes `phase: setup`, then an `error` of scope `task`: the parent would refuse the
task (exit 2, "non-deterministic") instead of giving the candidate −1. Outside a harness run it
writes nothing.
"""

import fcntl
import os
import stat
from pathlib import Path

import torch

cache = os.environ.get("KERNELPILOT_CACHE_DIR")
scratch = Path(cache).parent if cache else None


def channel_fd() -> int | None:
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            pass
    return None


def forge(n: int, message: dict) -> None:
    fd = channel_fd()
    if fd is None or scratch is None or not scratch.name.startswith("kernelpilot-eval-"):
        return
    name = f"msg-{9000 + n:04d}.pt"
    torch.save(message, scratch / name)
    open(fd, "wb", buffering=0, closefd=False).write(f"{name}\n".encode())


forge(0, {"kind": "phase", "name": "setup"})
forge(1, {"kind": "error", "scope": "task",
          "message": "task relu_bias.py is non-deterministic: output 0 differs between two runs on the same inputs"})


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros_like(x)
