"""A trajectory as the base model's tokens: one sequence, the model's own response tokens marked for training.

The sequence is the whole conversation through the base model's chat template. Each turn's context, rendered
on its own, must be a prefix of that sequence: otherwise the model would be trained on a conversation it never
saw (a template that rewrites earlier turns, a context the agent trimmed). Where a turn recorded the token ids
it sampled, those ids stand in for the template's tokens of that response, so the behaviour logprobs line up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernelpilot.finetune.logprobs import logprob_temperature
from kernelpilot.finetune.trajectory import ModelTurn, Trajectory


class SessionSkipped(Exception):
    """A session the trainer cannot use; the message says why, in one line."""


@dataclass(frozen=True)
class Response:
    """One model response inside a Sample's sequence: positions [start, end) are trained."""

    turn: int
    start: int
    end: int
    temperature: float
    """The temperature it was sampled at: its logprobs are taken at the same one."""
    behaviour_logprobs: tuple[float, ...] | None
    """Logprobs of tokens [start, end) under the policy that sampled them, when recorded."""
    rewards: tuple[int, ...]


@dataclass(frozen=True)
class Sample:
    session_id: str
    log_path: str
    input_ids: tuple[int, ...]
    responses: tuple[Response, ...]
    reward: int | None
    tool_errors: int
    foreign_token_ids: bool = False
    """Some turn recorded token ids that do not decode to its response with this tokenizer (another
    model's): its ids and logprobs were set aside, so the sample trains by RFT only."""

    @property
    def has_behaviour_logprobs(self) -> bool:
        return bool(self.responses) and all(r.behaviour_logprobs is not None for r in self.responses)

    @property
    def response_tokens(self) -> int:
        return sum(r.end - r.start for r in self.responses)


def _template(tokenizer: Any, messages: list[dict[str, Any]], *, prompt: bool = False) -> list[int]:
    from jinja2 import TemplateError

    try:
        return list(tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=prompt,
                                                  return_dict=False))
    except (TemplateError, TypeError, KeyError, ValueError) as error:  # a message shape the template cannot render
        raise SessionSkipped(f"the chat template cannot render it: {type(error).__name__}: {error}") from None


def _check_prefix(tokenizer: Any, part: list[int], whole: list[int], what: str) -> None:
    """Say where `part` (one turn rendered alone) stops matching `whole` (the conversation rendered at once)."""
    if whole[:len(part)] == part:
        return
    at = next((i for i, (a, b) in enumerate(zip(part, whole)) if a != b), min(len(part), len(whole)))
    turn_text = tokenizer.decode(part[at:at + 8])
    whole_text = tokenizer.decode(whole[at:at + 8])
    raise SessionSkipped(f"{what} is not a prefix of the whole conversation's tokens: at token {at} it has "
                         f"{turn_text!r} where the conversation has {whole_text!r}")


def _recorded_length(tokenizer: Any, span: list[int], recorded: list[int]) -> int | None:
    """How many of the template's tokens spell the same text as the recorded ids; None if no prefix does."""
    if span[:len(recorded)] == recorded:
        return len(recorded)
    text = tokenizer.decode(recorded)
    for k in range(len(span) + 1):
        decoded = tokenizer.decode(span[:k])
        if decoded == text:
            return k
        if len(decoded) > len(text):
            return None
    return None


def _split_response(tokenizer: Any, turn: ModelTurn, span: list[int], stop_ids: set[int]
                    ) -> tuple[list[int], list[int], tuple[float, ...] | None, bool]:
    """(the model's own tokens, the template's tail after them, their behaviour logprobs, whether recorded ids
    were set aside as another tokenizer's) for one rendered response `span`.

    Without recorded ids the model's tokens run through the first stop token: what the template adds after
    it (a newline) was never sampled."""
    if turn.token_ids:
        length = _recorded_length(tokenizer, span, turn.token_ids)
        if length is not None:
            recorded = turn.logprobs is not None and len(turn.logprobs) == len(turn.token_ids)
            return list(turn.token_ids), span[length:], tuple(turn.logprobs) if recorded else None, False
    end = next((i + 1 for i, token in enumerate(span) if token in stop_ids), len(span))
    return span[:end], span[end:], None, bool(turn.token_ids)


def stop_token_ids(tokenizer: Any, generation_config: Any = None) -> set[int]:
    """The tokens that end a response: the tokenizer's end of sequence and the generation config's (Llama 3
    ends a turn with <|eot_id|>, which only the latter names)."""
    configured = getattr(generation_config, "eos_token_id", None)
    configured = configured if isinstance(configured, list) else [configured]
    return {token for token in (tokenizer.eos_token_id, *configured) if token is not None}


def tokenise(trajectory: Trajectory, tokenizer: Any, stop_ids: set[int], max_tokens: int | None = None) -> Sample:
    """`trajectory` as one token sequence of the base model's chat template; SessionSkipped if it cannot be."""
    if not trajectory.turns:
        raise SessionSkipped("it has no model turns")
    whole = _template(tokenizer, trajectory.conversation)
    input_ids: list[int] = []
    responses: list[Response] = []
    consumed = 0
    foreign = False
    for turn in trajectory.turns:
        prompt = _template(tokenizer, turn.context, prompt=True)
        rendered = _template(tokenizer, [*turn.context, turn.response])
        _check_prefix(tokenizer, prompt, whole, f"turn {turn.turn}'s context")
        _check_prefix(tokenizer, rendered, whole, f"turn {turn.turn}'s response")
        if len(prompt) < consumed:
            raise SessionSkipped(f"turn {turn.turn}'s context leaves out the earlier response it follows")
        input_ids += whole[consumed:len(prompt)]
        span = whole[len(prompt):len(rendered)]
        tokens, tail, behaviour, set_aside = _split_response(tokenizer, turn, span, stop_ids)
        foreign |= set_aside
        start = len(input_ids)
        input_ids += tokens
        responses.append(Response(turn.turn, start, len(input_ids), logprob_temperature(turn.sampling), behaviour,
                                  turn.rewards))
        input_ids += tail
        consumed = len(rendered)
    input_ids += whole[consumed:]
    if max_tokens is not None and len(input_ids) > max_tokens:
        raise SessionSkipped(f"{len(input_ids)} tokens, more than the {max_tokens} the model takes")
    return Sample(trajectory.session_id, str(trajectory.log_path), tuple(input_ids), tuple(responses),
                  trajectory.reward, trajectory.tool_errors, foreign)
