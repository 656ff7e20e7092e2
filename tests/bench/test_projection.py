"""A sampled run's estimate of what the whole selection would take, as issue-sized runs are planned from one."""

from collections import Counter

from kernelpilot.bench.outcome import PASSED, TASK_ERROR, TaskOutcome
from kernelpilot.bench.report import bench_json, markdown

DONE = [TaskOutcome("1_a.py", 1, PASSED, 3, seconds=10.0), TaskOutcome("1_b.py", 1, PASSED, 3, seconds=20.0),
        TaskOutcome("2_a.py", 2, TASK_ERROR, seconds=30.0)]
RUN = {"suite": "KernelBench", "candidates": "solutions", "device": "cpu", "policy": "strict"}


def test_a_sample_projects_each_levels_mean_over_its_tasks():
    data = bench_json(RUN, DONE, [1.0], True, Counter({1: 10, 2: 4}))
    assert data["selection"] == {"tasks": 14, "by_level": {"1": 10, "2": 4}, "projected_seconds": 15.0 * 10 + 30.0 * 4}
    assert "Projected for all 14 selected tasks at this pace: 4.5 min" in markdown(data)


def test_a_level_with_nothing_done_is_not_guessed():
    data = bench_json(RUN, DONE, [1.0], False, Counter({1: 10, 2: 4, 3: 5}))
    assert data["selection"]["projected_seconds"] is None
    assert "No projection for all 19 selected tasks yet" in markdown(data)


def test_a_run_of_the_whole_selection_carries_no_projection():
    assert "selection" not in bench_json(RUN, DONE, [1.0], True, Counter({1: 2, 2: 1}))
