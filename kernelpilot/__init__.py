"""kernelpilot: make PyTorch models faster with LLM-written kernels, judged by a harness the agent cannot fool."""

__version__ = "0.1.0"
