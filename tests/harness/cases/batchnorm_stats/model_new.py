from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    """Training-mode BatchNorm2d: normalised by the batch's mean and (biased) variance per channel."""

    def __init__(self, channels: int):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, channels, height, width = x.shape
        out = torch.empty_like(x)
        ops.batch_norm_train(x, self.bn.weight, self.bn.bias, out, batch, channels, height * width, self.bn.eps)
        return out
