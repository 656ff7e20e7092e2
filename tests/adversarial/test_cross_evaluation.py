"""One evaluation must not change the verdict of a later one that shares its kernelpilot cache.

Evaluations that shared one KERNELPILOT_CACHE_DIR used to share its torch extensions folder, writable from
the sandbox. A candidate could leave files there under another candidate's load_inline extension name, and
that other (honest, unchanged) candidate was judged on them later (red team round E):

- `poisoners/poison_stale_extension_lock.py` leaves a stale `lock` in the victim's build folder: the victim's
  load_inline waits for it forever and times out in import;
- `poisoners/poison_extension_binary.py` builds the victim's exact source under its name, then swaps the
  built `.so` for a planted one (ninja finds nothing out of date, so the victim imports it) that
  divides the harness's timing samples: the victim's reward goes from 1 to 3.

The victim is `cpu/legit_load_inline.py` on `relu_bias.py`. Each test evaluates the poisoner, then the
victim, through the CLI exactly as test_hacks does, both with ONE fresh private cache, and asserts what a
user relies on: the victim's verdict is the one it earns on a clean cache (each evaluation now builds in a
private extensions folder).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_hacks import Outcome, run_eval

TASK = "relu_bias.py"
VICTIM = "cpu/legit_load_inline.py"
STALE_LOCK = "poisoners/poison_stale_extension_lock.py"
PLANTED_BINARY = "poisoners/poison_extension_binary.py"

SPEEDUP_RATIO = 2.0
"""The victim's speedup over eager after the poisoner, within this factor of its clean-cache speedup
(honest rewards vary 1..3 with timing noise; a planted binary that shrinks samples moves it ~10x)."""


def run_with_cache(candidate: str, cache: Path) -> Outcome:
    return run_eval(TASK, candidate, env={"KERNELPILOT_CACHE_DIR": str(cache)})


def assert_honest_verdict(victim: Outcome, evidence: str) -> None:
    """What the honest victim earns on a clean cache: built, correct, no violation, reward >= 1."""
    assert victim.returncode == 0 and victim.result is not None, evidence
    r = victim.result
    assert "timed out" not in (r.get("error") or ""), evidence
    assert r["built"] and r["correct"], evidence
    assert r["violations"] == [], evidence
    assert r["reward"] >= 1, evidence


@pytest.fixture(scope="module")
def clean_victim(tmp_path_factory) -> Outcome:
    outcome = run_with_cache(VICTIM, tmp_path_factory.mktemp("clean-cache"))
    assert_honest_verdict(outcome, f"the victim on a clean cache: {outcome.describe()}")
    return outcome


@pytest.mark.slow
def test_stale_extension_lock_does_not_stall_a_later_evaluation(tmp_path):
    poisoner = run_with_cache(STALE_LOCK, tmp_path)
    victim = run_with_cache(VICTIM, tmp_path)
    assert_honest_verdict(victim, f"poisoner: {poisoner.describe()}\nvictim after it: {victim.describe()}")


@pytest.mark.slow
def test_planted_extension_binary_does_not_change_a_later_verdict(tmp_path, clean_victim):
    poisoner = run_with_cache(PLANTED_BINARY, tmp_path)
    victim = run_with_cache(VICTIM, tmp_path)
    evidence = (f"poisoner: {poisoner.describe()}\nvictim after it: {victim.describe()}\n"
                f"victim on a clean cache: {clean_victim.describe()}")
    assert_honest_verdict(victim, evidence)
    ratio = victim.result["speedup_vs_eager"] / clean_victim.result["speedup_vs_eager"]
    assert 1 / SPEEDUP_RATIO <= ratio <= SPEEDUP_RATIO, f"{ratio:.2f}x the clean speedup\n{evidence}"
