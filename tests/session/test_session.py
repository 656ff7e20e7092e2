"""`Session` owns a session's state: what a live session holds, the same session reopened from its log holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelpilot.errors import SessionError
from kernelpilot.harness.result import EvalResult, Violation
from kernelpilot.session.events import LLMTurn, SessionStarted, TokenDelta
from kernelpilot.session.session import Session

TASK = Path(__file__).resolve().parents[2] / "examples" / "relu_bias" / "model.py"


def verdict(correct: bool, speedup: float | None = None, violated: bool = False) -> EvalResult:
    return EvalResult(task="model.py", candidate="c", device="cpu", built=True, correct=correct,
                      reward=3 if correct and not violated else -1, speedup_vs_compile=speedup,
                      violations=(Violation("op_audit", "aten.relu"),) if violated else ())


def new_session(root: Path, on_event=lambda event: None) -> Session:
    return Session.create(root, TASK, skill="cpu", model="replay:t.json", sampling={"temperature": 0.5},
                          device="cpu", policy="strict", starter={"model_new.py": "v = 0\n"}, on_event=on_event)


def evaluate(session: Session, source: str, result: EvalResult) -> int:
    (session.workspace_dir / "model_new.py").write_text(source)
    candidate_id, commit = session.next_candidate()
    return session.add_evaluation(candidate_id, commit, result).candidate_id


def test_a_reopened_session_holds_what_the_live_one_held(tmp_path):
    seen = []
    live = new_session(tmp_path, seen.append)
    assert isinstance(live.events[0], SessionStarted) and live.started.task_sha256
    live.record(LLMTurn(turn=1, response={"content": "hi"}, prompt_tokens=10, completion_tokens=3, cost_usd=0.25))
    live.record(TokenDelta(turn=2, text="shown, not logged"))
    assert evaluate(live, "v = 1\n", verdict(True, 1.2)) == 1
    assert evaluate(live, "v = 2\n", verdict(True, 2.0, violated=True)) == 2
    assert evaluate(live, "v = 3\n", verdict(True, 1.5)) == 3
    for decision, candidate_id in (("accept", 1), ("reject", 2), ("accept", 3), ("undo", 3)):
        live.record_decision(decision, candidate_id, {})

    assert live.best().candidate_id == 3, "the fastest correct candidate without violations"
    assert live.marks() == {1: "accepted", 2: "rejected"}, "undo gives the mark back to the accept before"
    assert [e for e in seen if not isinstance(e, TokenDelta)] == list(live.events[1:]), \
        "the listener sees each event after the log has it (the start is shown by replay)"

    reopened = Session.open(live.session_id, tmp_path)
    assert reopened.candidates() == live.candidates() and reopened.best() == live.best()
    assert reopened.marks() == live.marks() and reopened.usage == live.usage
    assert (reopened.usage.turns, reopened.usage.cost_usd, reopened.usage.prompt_tokens) == (1, 0.25, 10)
    assert [d.decision for d in reopened.decisions()] == ["accept", "reject", "accept", "undo"]
    assert reopened.files_at(reopened.candidate(2).commit)["model_new.py"] == "v = 2\n"
    with pytest.raises(SessionError, match="read-only"):
        reopened.record_decision("reject", 1, {})
    with pytest.raises(SessionError, match="no candidate 9"):
        reopened.candidate(9)


def test_a_candidate_committed_but_never_judged_is_the_next_candidate_again(tmp_path):
    """A kill between the commit and the verdict: resuming judges that commit, it does not commit again."""
    live = new_session(tmp_path)
    (live.workspace_dir / "model_new.py").write_text("v = 1\n")
    committed = live.next_candidate()
    resumed = Session.open(live.directory, read_only=False)
    assert resumed.has_unevaluated_head() and resumed.next_candidate() == committed
    (resumed.workspace_dir / "model_new.py").write_text("v = 2\n")
    changed = resumed.next_candidate()
    assert changed[0] == 1 and changed[1] != committed[1], "changed since: committed anew, still candidate 1"
