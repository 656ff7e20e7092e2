"""An honest candidate for the task that kills the judge's reference keeper."""

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
