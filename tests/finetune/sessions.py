"""Trajectories as the session reader hands them to the trainer: short conversations that train in seconds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kernelpilot.finetune.trajectory import ModelTurn, Trajectory

SYSTEM = {"role": "system", "content": "You write CUDA kernels."}
USER = {"role": "user", "content": "Make relu(x + b) faster."}
TOOL_RESULT = "evaluate: correct, 1.3x faster than eager"


def tool_call(text: str) -> str:
    return f'{text}\n```json\n{{"tool": "evaluate", "arguments": {{}}}}\n```'


def trajectory(responses: list[str], reward: int | None, *, session_id: str = "s1", rewards: list[tuple[int, ...]] | None = None,
               token_ids: list[list[int] | None] | None = None, logprobs: list[list[float] | None] | None = None,
               temperature: float = 0.7, tool_errors: int = 0) -> Trajectory:
    """A session of a `local:` model (the text tool protocol) that answered `responses` in turn, each followed by the
    tool's result."""
    context = [SYSTEM, USER]
    turns = []
    for i, content in enumerate(responses):
        response = {"role": "assistant", "content": content}
        turns.append(ModelTurn(turn=i, context=list(context), response=response,
                               token_ids=token_ids[i] if token_ids else None,
                               logprobs=logprobs[i] if logprobs else None,
                               sampling={"temperature": temperature}, model="local:smollm2-135m",
                               rewards=rewards[i] if rewards else ()))
        context += [response, {"role": "user", "content": f"Result of `evaluate` (text-{i}-0):\n{TOOL_RESULT}"}]
    return Trajectory(session_id=session_id, log_path=Path(f"/sessions/{session_id}/session.jsonl"),
                      model="local:smollm2-135m", turns=tuple(turns), reward=reward, tool_errors=tool_errors)


def with_behaviour(session: Trajectory, model, tokenizer) -> Trajectory:
    """`session` as `local:` would have logged it from `model`: each response's token ids (its text and the stop
    token) with their logprobs, log_softmax(logits / T)[token] at the recorded temperature T."""
    import torch

    turns = []
    for turn in session.turns:
        prompt = tokenizer.apply_chat_template(turn.context, tokenize=True, add_generation_prompt=True,
                                               return_dict=False)
        ids = tokenizer.encode(turn.response["content"]) + [tokenizer.eos_token_id]
        with torch.no_grad():
            logits = model(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1:-1]
        logprobs = torch.log_softmax(logits / turn.sampling["temperature"], -1)[torch.arange(len(ids)), ids]
        turns.append(replace(turn, token_ids=ids, logprobs=logprobs.tolist()))
    return replace(session, turns=tuple(turns))


def write_log(session: Trajectory, root: Path) -> Path:
    """`session` as the agent loop logs it (root/<session id>/session.jsonl), its reward from one evaluation after
    its last turn unless its turns carry their own."""
    import json

    from kernelpilot.harness.result import EvalResult
    from kernelpilot.session.events import Evaluation, LLMTurn, SessionStarted

    def evaluation(reward: int) -> Evaluation:
        return Evaluation(candidate_id=1, commit="0" * 40,
                          result=EvalResult("model.py", "candidate", "cpu", built=True, correct=reward > 0, reward=reward))

    events = [SessionStarted(session_id=session.session_id, task_path="model.py", task_sha256="0" * 64, skill="cuda",
                             model=session.model, sampling=session.turns[0].sampling, device="cpu")]
    for turn in session.turns:
        events.append(LLMTurn(turn=turn.turn, response=turn.response, messages=turn.context, token_ids=turn.token_ids,
                              logprobs=turn.logprobs, model=turn.model, sampling=turn.sampling))
        events += [evaluation(reward) for reward in turn.rewards]
    if session.reward is not None and not any(turn.rewards for turn in session.turns):
        events.append(evaluation(session.reward))
    log = root / session.session_id / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("".join(json.dumps(event.to_json()) + "\n" for event in events))
    return log
