"""A scripted session for the TUI tests: hand-made events and candidate files, no agent, no harness."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kernelpilot.harness.result import (
    EvalResult,
    KernelTime,
    Mismatch,
    OutputCheck,
    Violation,
)
from kernelpilot.session.events import (
    BuildLogLine,
    Evaluation,
    LLMTurn,
    SessionEnded,
    SessionEvent,
    SessionStarted,
    TokenDelta,
    ToolCall,
    ToolResult,
    UserDecision,
)

MODEL_NEW = '''from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.scale = scale

    def forward(self, x):
        out = torch.empty_like(x)
        ops.relu_bias_scale(x, self.bias, out, x.shape[0], x.shape[1], self.scale)
        return out
'''
KERNEL = '''#include <cstdint>
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = (v > 0.f ? v : 0.f) * scale;
    }
}
'''
FILES = {
    "c1": {"model_new.py": MODEL_NEW, "kernels/relu_bias_scale.cpp": KERNEL.replace("int64_t c", "int64_t  c")},
    "c2": {"model_new.py": MODEL_NEW, "kernels/relu_bias_scale.cpp": KERNEL.replace("v > 0.f", "v >= 1.f")},
    "c3": {"model_new.py": MODEL_NEW, "kernels/relu_bias_scale.cpp": "#pragma omp parallel for\n" + KERNEL},
}
TIMES = {"eager": 4.2, "compile": 3.1, "candidate": 2.05}


def _check(mismatched: int, max_abs: float) -> OutputCheck:
    grid = tuple(tuple((max_abs if (r == 1 and c < 3 and mismatched) else 1e-7 * (r + c)) for c in range(8))
                 for r in range(4))
    mismatches = tuple(Mismatch((1, 5 + i), 0.25 * i, 0.25 * i + max_abs) for i in range(min(mismatched, 4)))
    return OutputCheck(index=0, shape=(2048, 2048), dtype="float32", max_abs_err=max_abs, max_rel_err=max_abs * 2,
                       atol=1e-4, rtol=1e-4, mismatched=mismatched, numel=2048 * 2048,
                       first_mismatches=mismatches, error_grid=grid)


def results() -> dict[int, EvalResult]:
    base = dict(task="examples/relu_bias/model.py", device="cpu", built=True)
    return {
        1: EvalResult(candidate="c1", correct=True, reward=2, max_abs_err=2e-7, max_rel_err=1e-6,
                      times_ms={"eager": 4.2, "compile": 3.1, "candidate": 3.5},
                      spread_pct={"eager": 1.2, "compile": 0.8, "candidate": 1.5},
                      speedup_vs_eager=1.2, speedup_vs_compile=0.886, outputs=(_check(0, 2e-7),),
                      kernels=(KernelTime("relu_bias_scale", 3.4, 1),), **base),
        2: EvalResult(candidate="c2", correct=False, reward=-1, max_abs_err=0.5, max_rel_err=1.0,
                      outputs=(_check(2_000_000, 0.5),), **base),
        3: EvalResult(candidate="c3", correct=True, reward=3, max_abs_err=2e-7, max_rel_err=1e-6, times_ms=TIMES,
                      spread_pct={"eager": 1.1, "compile": 0.9, "candidate": 1.3}, speedup_vs_eager=2.05,
                      speedup_vs_compile=1.51, outputs=(_check(0, 2e-7),),
                      kernels=(KernelTime("relu_bias_scale", 1.9, 1), KernelTime("empty_like", 0.1, 1)), **base),
        4: EvalResult(candidate="c4", built=False, error="build failed",
                      build_log="kernels/relu_bias_scale.cpp:4:5: error: expected ';' before 'for'\n",
                      task=base["task"], device="cpu"),
        5: EvalResult(candidate="c5", correct=True, reward=-1, violations=(Violation("op_audit", "aten.relu called"),),
                      **base),
    }


def script(task_path: str) -> list[SessionEvent]:
    """A short session: a streamed turn, a folded tool call, five candidates (one of each status)."""
    events: list[SessionEvent] = [
        SessionStarted(session_id="s-test", task_path=task_path, task_sha256="0" * 64, skill="cuda",
                       model="replay:test", sampling={}, device="cpu", ts=0.0),
    ]
    events += [TokenDelta(turn=1, text=piece, ts=0.0) for piece in ("I will fuse ", "bias, ReLU ", "and scale.")]
    events += [
        LLMTurn(turn=1, messages=[], response={"content": "I will fuse bias, ReLU and scale."}, ts=0.0),
        ToolCall(turn=1, call_id="t1", name="write", arguments={"path": "kernels/relu_bias_scale.cpp"}, ts=0.0),
        ToolResult(turn=1, call_id="t1", name="write", output="wrote 9 lines", ts=0.0),
    ]
    for candidate_id, result in results().items():
        for line in result.build_log.splitlines():
            events.append(BuildLogLine(candidate_id=candidate_id, line=line, ts=0.0))
        events.append(Evaluation(candidate_id=candidate_id, commit=f"c{min(candidate_id, 3)}", result=result, ts=0.0))
    events.append(SessionEnded(reason="done", best_candidate_id=3, turns=1, ts=0.0))
    return events


@dataclass
class ScriptedSession:
    """Plays `events` through `on_event` like the controller; `before_evaluation` runs in the session thread
    before each evaluation is reported, as the harness would."""

    on_event: Callable[[SessionEvent], None]
    events: list[SessionEvent]
    session_id: str = "s-test"
    workspace_dir: Path = Path("workspace")
    before_evaluation: Callable[[Evaluation], None] | None = None
    steered: list[str] = field(default_factory=list)
    decisions: list[tuple[str, int | None, dict]] = field(default_factory=list)
    permissions: list[tuple[str, str]] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)
    started: threading.Event | None = None
    """When given, the session waits for it before its first event."""

    def run(self) -> str:
        if self.started is not None:
            self.started.wait()
        for event in self.events:
            if self.stopped.is_set():
                break
            if isinstance(event, Evaluation) and self.before_evaluation:
                self.before_evaluation(event)
            self.on_event(event)
        return "done"

    def steer(self, text: str) -> None:
        self.steered.append(text)

    def pause(self) -> None: ...
    def resume(self) -> None: ...

    def stop(self) -> None:
        self.stopped.set()

    def answer_permission(self, request_id: str, answer: str) -> None:
        self.permissions.append((request_id, answer))

    def files_at(self, commit: str) -> dict[str, str]:
        return dict(FILES[commit])

    def record_decision(self, decision: str, candidate_id: int | None, detail: dict) -> None:
        """Recorded, then reported like any event (the controller's session logs it, then shows it)."""
        self.decisions.append((decision, candidate_id, detail))
        self.on_event(UserDecision(decision=decision, candidate_id=candidate_id, detail=dict(detail)))
