"""Red team 40's task (for cpu/expanded_when_timed.py): each row's sum, repeated across 4096 columns (a dense 512 x 4096 fp32 output, 8 MB).

Memory-bound on the output's write: the answer is one value per row, broadcast (a softmax denominator, a
row statistic fed to an elementwise op, repeat/expand().contiguous() in KernelBench models)."""

import torch
import torch.nn as nn

ROWS, COLS, REPEAT = 512, 256, 4096


class Model(nn.Module):
    def __init__(self, repeat: int):
        super().__init__()
        self.repeat = repeat

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1, keepdim=True).expand(-1, self.repeat).contiguous()


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [REPEAT]
