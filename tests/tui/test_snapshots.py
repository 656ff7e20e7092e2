"""Snapshots of the main screen with a candidate selected, in the dark and the light theme, and on an 80×24
terminal."""

from __future__ import annotations

import pytest
from conftest import settle
from fixtures import ScriptedSession, script
from textual.widgets import Input

from kernelpilot.tui.app import KernelpilotApp
from kernelpilot.tui.widgets.candidates import CandidatesTable


@pytest.mark.parametrize("theme", ["kernelpilot-dark", "kernelpilot-light"])
def test_main_screen(theme, snap_compare, monkeypatch, tmp_path):
    monkeypatch.setattr("kernelpilot.tui.widgets.gpu_panel.sample_gpu", lambda: None)  # no GPU readings that vary
    task = tmp_path / "model.py"
    app = KernelpilotApp(lambda on_event: ScriptedSession(on_event, script(str(task))), task_path=task,
                         gpu_interval=0)

    async def review_best_candidate(pilot) -> None:
        pilot.app.theme = theme
        await settle(pilot)
        pilot.app.query_one(Input).cursor_blink = False
        table = pilot.app.query_one(CandidatesTable)
        table.move_cursor(row=table.get_row_index("2"))
        await settle(pilot)
        pilot.app.query_one("#views").active = "tab-correctness"
        await settle(pilot)

    assert snap_compare(app, terminal_size=(160, 48), run_before=review_best_candidate)


def test_main_screen_at_80_by_24(snap_compare, monkeypatch, tmp_path):
    """The smallest terminal people use: every column of the candidates, the outputs table on its side, the
    whole footer."""
    monkeypatch.setattr("kernelpilot.tui.widgets.gpu_panel.sample_gpu", lambda: None)
    task = tmp_path / "model.py"
    app = KernelpilotApp(lambda on_event: ScriptedSession(on_event, script(str(task))), task_path=task,
                         gpu_interval=0)

    async def review_the_best_candidates_correctness(pilot) -> None:
        await settle(pilot)
        pilot.app.query_one(Input).cursor_blink = False
        pilot.app.query_one("#views").active = "tab-correctness"
        await settle(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=review_the_best_candidates_correctness)
