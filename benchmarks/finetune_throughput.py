"""`kernelpilot finetune` on the GPU: trained tokens per second and peak memory, per stage, for SmolLM2-135M's
architecture and a ~0.5B one.

    python benchmarks/finetune_throughput.py --tokenizer DIR [--sessions examples/sessions] [--steps 3]

The models have random weights, made from a config (a step's cost does not depend on the weights' values, and
nothing is downloaded). DIR holds a tokenizer with its chat template and SmolLM2-135M's config.json: the folder
`local:smollm2-135m` converts into kernelpilot's cache (`~/.cache/kernelpilot/gguf/SmolLM2-*`, less its weights).
The sessions are the shipped examples, in the text protocol, as `kernelpilot finetune` trains on them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kernelpilot.agent.textproto import trajectory_in_text_protocol  # noqa: E402  (this checkout's)
from kernelpilot.finetune.recipe import FinetuneOptions  # noqa: E402
from kernelpilot.finetune.trainer import finetune  # noqa: E402
from kernelpilot.session.trajectory import find_session_logs, read_trajectories  # noqa: E402

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json",
                   "generation_config.json")
HALF_BILLION = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                "num_attention_heads": 16, "num_key_value_heads": 4}
"""A Llama of ~0.5B parameters with SmolLM2's vocabulary (49152 tokens)."""


def random_model(tokenizer_dir: Path, into: Path, changes: dict) -> int:
    """A model folder of random weights beside the tokenizer's files (bf16 for the GPU, where finetune trains in
    bf16; float32 on the CPU, whose bf16 matmuls are slow); returns its parameter count."""
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(tokenizer_dir, local_files_only=True)
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the GGUF's, which these weights are not
    for name, value in changes.items():
        setattr(config, name, value)
    torch.manual_seed(0)
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
    model.save_pretrained(into)
    for name in TOKENIZER_FILES:
        if (tokenizer_dir / name).is_file():
            shutil.copy(tokenizer_dir / name, into / name)
    return sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--sessions", type=Path, default=ROOT / "examples" / "sessions")
    parser.add_argument("--steps", type=int, default=3, help="steps per stage")
    parser.add_argument("--models", default="smollm2-135m,0.5b")
    args = parser.parse_args()
    trajectories, unreadable = read_trajectories(find_session_logs([args.sessions]))
    trajectories = [trajectory_in_text_protocol(t) for t in trajectories]
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
    table = Table(title=f"finetune, {len(trajectories)} sessions, {args.steps} steps per stage, {device}")
    for column in ("model", "parameters", "stage", "steps", "trained tokens", "s per step", "tokens/s", "peak GiB"):
        table.add_column(column, justify="left" if column in ("model", "stage") else "right")
    sizes = {"smollm2-135m": {}, "0.5b": HALF_BILLION}
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory(prefix="kernelpilot-ft-bench-") as scratch:
            folder = Path(scratch) / name
            parameters = random_model(args.tokenizer, folder, sizes[name])
            if torch.cuda.is_available():
                torch.cuda.reset_peak_memory_stats()
            started = time.perf_counter()
            report = finetune(trajectories, FinetuneOptions(base_model=str(folder), out=Path(scratch) / "out",
                                                            max_steps=args.steps), unreadable)
            wall = time.perf_counter() - started
            peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else float("nan")
            for stage in ("rft", "critic", "ppo"):
                steps = [s for s in report.steps if s.stage == stage]
                measured = steps[1:] or steps  # the first step pays for kernels' first launches
                if not measured:
                    continue
                tokens, seconds = sum(s.tokens for s in measured), sum(s.seconds for s in measured)
                table.add_row(name, f"{parameters / 1e6:.0f}M", stage, str(len(steps)), str(tokens),
                              f"{seconds / len(measured):.2f}", f"{tokens / seconds:.0f}", f"{peak:.1f}")
            Console(stderr=True).print(f"{name}: {wall:.0f} s in all")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
