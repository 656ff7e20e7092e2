"""The compile baseline cache: a cached compile time is compared under the run's own conditions."""

from __future__ import annotations

from kernelpilot.harness import baselines
from kernelpilot.harness.timing import Samples


def test_a_cached_compile_time_follows_eager_from_then_to_now():
    then = Samples(device=(2.0, 2.0, 2.2), host=(2.0, 2.0, 2.2))
    cached = baselines.entry({"device": [1.0, 1.1, 1.0], "host": [1.0, 1.1, 1.0]}, then, latency_s=3.0)
    busier_now = Samples(device=(3.0, 3.0, 3.3), host=(3.0, 3.0, 3.3))  # eager 1.5x slower in this run
    now = baselines.in_this_run(cached, busier_now)
    assert now["scale"] == 1.5 and now["cached"]
    assert now["device"] == [1.5, 1.5 * 1.1, 1.5]


def test_an_entry_cached_without_eager_is_taken_as_it_is():
    now = baselines.in_this_run({"device": [1.0], "host": [1.0]}, Samples(device=(3.0,), host=(3.0,)))
    assert now["scale"] == 1.0 and now["device"] == [1.0]
