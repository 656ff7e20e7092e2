"""Sessions become SmolLM2 token sequences in which only the model's own response tokens are trained."""

from __future__ import annotations

import copy
import re
from dataclasses import replace

import pytest

from kernelpilot.finetune.tokenise import SessionSkipped, stop_token_ids, tokenise

from .sessions import TOOL_RESULT, tool_call, trajectory

RESPONSES = [tool_call("Fuse the add into the relu."), "Done: one kernel."]


def test_only_the_models_own_tokens_are_trained(tokenizer):
    session = trajectory(RESPONSES, 3)
    sample = tokenise(session, tokenizer, stop_token_ids(tokenizer))
    whole = tokenizer.apply_chat_template(session.conversation, tokenize=True, return_dict=False)
    assert list(sample.input_ids) == whole
    trained = [tokenizer.decode(sample.input_ids[r.start:r.end]) for r in sample.responses]
    assert trained == [text + "<|im_end|>" for text in RESPONSES]
    in_responses = {i for r in sample.responses for i in range(r.start, r.end)}
    untrained = tokenizer.decode([t for i, t in enumerate(sample.input_ids) if i not in in_responses])
    for text in ("You write CUDA kernels.", "Make relu(x + b) faster.", TOOL_RESULT, "<|im_start|>assistant"):
        assert text in untrained
    assert [r.temperature for r in sample.responses] == [0.7, 0.7]
    assert not sample.has_behaviour_logprobs


def test_recorded_token_ids_stand_in_for_the_templates_with_their_logprobs(tokenizer):
    """A sampler may produce a split that re-tokenising the text would not (here "Fu" + "se ..."): the sampled
    ids are what the logprobs belong to, so they are what the sequence holds."""
    text = RESPONSES[1]
    sampled = tokenizer.encode(text[:2]) + tokenizer.encode(text[2:]) + [tokenizer.eos_token_id]
    assert sampled[:-1] != tokenizer.encode(text), "the split differs from the canonical one"
    logprobs = [-0.5] * len(sampled)
    sample = tokenise(trajectory(RESPONSES, 3, token_ids=[None, sampled], logprobs=[None, logprobs]),
                      tokenizer, stop_token_ids(tokenizer))
    second = sample.responses[1]
    assert list(sample.input_ids[second.start:second.end]) == sampled
    assert second.behaviour_logprobs == tuple(logprobs)
    assert tokenizer.decode(sample.input_ids[second.end:]) == "\n", "the template's newline follows, untrained"


def test_token_ids_of_another_tokenizer_are_set_aside(tokenizer):
    sample = tokenise(trajectory(RESPONSES, 3, token_ids=[[5000, 6000, 7000], None], logprobs=[[-1.0] * 3, None]),
                      tokenizer, stop_token_ids(tokenizer))
    assert sample.foreign_token_ids and not sample.has_behaviour_logprobs
    first = sample.responses[0]
    assert tokenizer.decode(sample.input_ids[first.start:first.end]) == RESPONSES[0] + "<|im_end|>"


def test_a_template_that_rewrites_earlier_turns_is_caught_and_located(tokenizer):
    """Templates of reasoning models drop earlier turns' thinking: the model would be trained on contexts it
    never saw. The check names the turn and shows both sides where they part."""
    rewriting = copy.deepcopy(tokenizer)
    rewriting.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
        "{% if m['role'] == 'assistant' and not loop.last %}(earlier answer){% else %}{{ m['content'] }}{% endif %}"
        "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    with pytest.raises(SessionSkipped) as caught:
        tokenise(trajectory(RESPONSES, 3), rewriting, stop_token_ids(tokenizer))
    assert re.fullmatch(r"turn 0's response is not a prefix of the whole conversation's tokens: at token \d+ it has "
                        r"'.*Fuse.*' where the conversation has '\(earlier answer\).*'", str(caught.value), re.DOTALL)


def test_a_context_that_leaves_out_an_earlier_response_is_caught(tokenizer):
    """An agent that trimmed its history: the first response is not in the conversation the second one saw."""
    session = trajectory(RESPONSES, 3)
    trimmed = replace(session.turns[1], context=session.turns[1].context[:2])
    with pytest.raises(SessionSkipped, match="turn 0's response is not a prefix .* 'Fuse the add"):
        tokenise(replace(session, turns=(session.turns[0], trimmed)), tokenizer, stop_token_ids(tokenizer))
