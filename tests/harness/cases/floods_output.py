"""A candidate whose forward prints 256 MB and then fails: the judge drains it all, keeps only the end."""

import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        line = "x" * 1023 + "\n"
        for _ in range(256 * 1024):
            sys.stdout.write(line)
        print("the last words after the flood", flush=True)
        raise RuntimeError("flooded")
