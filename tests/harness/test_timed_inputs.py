"""The candidate's timed inputs: each run's curve drawn by the judge only just before the run, and rebuilt by the
keeper exactly, so that the runs checked after the timing are held to eager's answer on the very same values."""

import torch

from kernelpilot.harness.messages import TimedRun
from kernelpilot.harness.observations import Observations
from kernelpilot.harness.timing import FreshInputs, fresh_curve


def test_the_keeper_rebuilds_a_timed_run_bit_for_bit_from_its_set_and_curve():
    generator = torch.Generator().manual_seed(0)
    sets = [[torch.randn(64, 32, generator=generator), torch.randn(32, generator=generator), 7]
            for _ in range(3)]
    timed = FreshInputs(sets, 1)
    kept = [FreshInputs([inputs], 0) for inputs in sets]  # the keeper makes each set once, for all its runs
    for run in range(6):
        curve = fresh_curve()
        worker_side = [x.clone() if isinstance(x, torch.Tensor) else x for x in timed.scaled(run, curve)]
        keeper_side = kept[run % 3].scaled(0, curve)
        assert all(torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b
                   for a, b in zip(worker_side, keeper_side))
        assert not torch.equal(worker_side[0], sets[run % 3][0])  # new values every run


def test_only_the_candidates_runs_get_the_judges_curves_one_run_ahead():
    observations = Observations(sources={}, timed_runs=4, clock_calibration_runs=2)
    seeds = list(range(100, 104))
    eager_words = [observations.answer_timed_run("baseline", TimedRun(run), 0.0, seeds, "cpu") for run in range(4)]
    assert all("curve" not in word for word in eager_words)  # eager's inputs follow from its own seed

    first = observations.first_curve()["curve"]
    words = [observations.answer_timed_run("profile", TimedRun(run), 0.0, seeds, "cpu") for run in range(4)]
    curves = observations.timed_loops["candidate"].curves
    assert curves == [first, *(word["curve"] for word in words[:3])]  # run i + 1's, after run i: none ahead
    assert "curve" not in words[3]
    assert len(set(curves)) == 4 and all(0.0 <= v < 1.0 for curve in curves for v in curve)
