"""Manual mode: no model; a person's saves of kernels/ and model_new.py are evaluated (debounced)."""

from __future__ import annotations

import threading
import time

from agent_helpers import TASK

from kernelpilot.agent.controller import SessionController, SessionSettings
from kernelpilot.session.events import Evaluation, LLMTurn, SessionStarted, UserDecision
from kernelpilot.session.log import read_events

BROKEN_KERNEL = 'extern "C" void relu_bias_scale(const float* x, float* out) { out[0] = x[0] }\n'


def test_each_burst_of_saves_is_evaluated_once(tmp_path):
    events = []
    evaluated = threading.Event()

    def on_event(event):
        events.append(event)
        if isinstance(event, Evaluation):
            evaluated.set()

    controller = SessionController(SessionSettings(task_path=TASK, device="cpu", sessions_root=tmp_path), on_event)
    assert controller.model is None
    starter = (controller.workspace_dir / "model_new.py").read_text()
    assert "class ModelNew" in starter and "load_kernels" in starter
    worker = threading.Thread(target=controller.run)
    worker.start()
    try:
        time.sleep(0.5)  # the observer is watching
        (controller.workspace_dir / "kernels" / "relu_bias_scale.cpp").write_text(BROKEN_KERNEL)
        (controller.workspace_dir / "model_new.py").write_text(starter + "\n# edited\n")
        (controller.workspace_dir / "notes.md").write_text("not a candidate file\n")
        assert evaluated.wait(30), "a save was never evaluated"
        time.sleep(1.0)
    finally:
        controller.stop()
        worker.join(30)
    evaluations = [e for e in events if isinstance(e, Evaluation)]
    assert len(evaluations) == 1 and evaluations[0].result.status == "build_failed"
    assert controller.files_at(evaluations[0].commit)["kernels/relu_bias_scale.cpp"] == BROKEN_KERNEL
    controller.record_decision("reject", evaluations[0].candidate_id, {})
    logged = read_events(controller.session.log_path)
    assert next(e for e in logged if isinstance(e, SessionStarted)).model == "manual"
    assert not any(isinstance(e, LLMTurn) for e in logged)
    assert isinstance(logged[-1], UserDecision), "decisions after the session ends are still logged"
