"""`--model local:NAME_OR_PATH[+ADAPTER]`: generation in this process with transformers, with the exact sampled
token ids and their logprobs, so that `finetune` trains on what the model really did.

NAME_OR_PATH is anything `finetune.pretrained.load_pretrained` takes (`smollm2-135m`, a model folder, a `.gguf`
file, a model in the Hugging Face cache; never a download); ADAPTER a PEFT adapter folder loaded on top. The model
runs on the GPU when torch sees one. Tools go through the text protocol (`textproto`): small open models have no
native tool calling, and the chat template renders fenced blocks like any text.

Logprob convention (`finetune.logprobs`, which the trainer uses too):
    logprobs[i] = log_softmax(logits_i / T)[token_ids[i]]
where logits_i are the model's raw logits for the i-th generated position and T the sampling temperature; T of 0
or None means greedy decoding, recorded with T = 1. top_p and top_k shape the sampling but are not applied to the
recorded logprobs. `token_ids` are the generated tokens as sampled, the end-of-turn token included when the model
emitted it (a reply cut by max_tokens has none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kernelpilot.agent.llm import DeltaSink, Reply
from kernelpilot.agent.textproto import as_text_protocol
from kernelpilot.errors import UsageError
from kernelpilot.finetune.logprobs import logprob_temperature, token_logprobs
from kernelpilot.finetune.pretrained import import_transformers, load_pretrained

DEFAULT_SAMPLING = {"temperature": 1.0, "top_p": 1.0, "top_k": 0, "max_tokens": 1024}
"""What a local model samples with unless told otherwise: the policy's own distribution (T = 1, no truncation),
which is what on-policy training wants."""


@dataclass
class LocalClient:
    """An in-process model with the client interface of `llm.LiteLLMClient` (`complete`, `sampling`,
    `native_tools`)."""

    ref: str
    """NAME_OR_PATH[+ADAPTER], as given after `local:`."""
    model: Any
    tokenizer: Any
    sampling: dict[str, Any] = field(default_factory=dict)
    """The effective parameters (defaults filled in), recorded with every turn."""
    native_tools: bool = False

    @classmethod
    def load(cls, ref: str, sampling: dict[str, Any]) -> LocalClient:
        name, _, adapter = ref.partition("+")
        if not name:
            raise UsageError("local: needs a model, e.g. local:smollm2-135m or local:PATH[+ADAPTER]")
        unknown = set(sampling) - set(DEFAULT_SAMPLING)
        if unknown:
            raise UsageError(f"local models take {', '.join(DEFAULT_SAMPLING)}; not {', '.join(sorted(unknown))}")
        model, tokenizer = load_pretrained(name, Path(adapter).expanduser() if adapter else None)
        # The checkpoint's own sampling defaults (a repetition penalty, a temperature) would shape the distribution
        # unrecorded: only the special tokens are kept, and the recorded parameters are all that apply.
        defaults = model.generation_config
        model.generation_config = import_transformers().GenerationConfig(
            bos_token_id=defaults.bos_token_id, eos_token_id=defaults.eos_token_id, pad_token_id=defaults.pad_token_id)
        return cls(ref, model, tokenizer, {**DEFAULT_SAMPLING, **sampling})

    def complete(self, messages: list[dict], tools: list[dict] | None, on_delta: DeltaSink) -> Reply:
        prompt = self.tokenizer.apply_chat_template(as_text_protocol(messages) if tools else messages,
                                                    add_generation_prompt=True, return_dict=True,
                                                    return_tensors="pt")["input_ids"].to(self.model.device)
        temperature = self.sampling["temperature"]
        greedy = not temperature
        with torch.inference_mode():
            output = self.model.generate(
                prompt, attention_mask=torch.ones_like(prompt), do_sample=not greedy,
                temperature=None if greedy else temperature, top_p=None if greedy else self.sampling["top_p"],
                top_k=None if greedy else self.sampling["top_k"], max_new_tokens=self.sampling["max_tokens"],
                pad_token_id=self.tokenizer.eos_token_id, output_logits=True, return_dict_in_generate=True,
                streamer=_delta_streamer(self.tokenizer, on_delta))
        token_ids = output.sequences[0, prompt.shape[1]:]  # (n,) int64
        logits = torch.stack(output.logits, dim=1)[0]  # (n, vocab): raw, before temperature and top-p/k
        sampled = token_logprobs(logits, token_ids, logprob_temperature(self.sampling))
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        return Reply({"role": "assistant", "content": text}, token_ids=token_ids.tolist(), logprobs=sampled.tolist(),
                     prompt_tokens=prompt.shape[1], completion_tokens=len(token_ids))


def _delta_streamer(tokenizer: Any, on_delta: DeltaSink):
    """transformers' `TextStreamer`, its finished pieces of text sent to `on_delta` instead of stdout."""
    streamer_class = import_transformers().TextStreamer

    class DeltaStreamer(streamer_class):
        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            if text:
                on_delta(text)

    return DeltaStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)
