"""The profiler's watch over timed calls: which ATen ops count as the candidate's."""

import threading

import torch

from kernelpilot.harness.audit import mark_call, watched_ops, watching_calls


def test_ops_inside_marked_calls_and_on_other_threads_count_and_the_harness_s_between_calls_do_not():
    x = torch.randn(8, 8)
    with watching_calls() as profile:
        for _ in range(3):
            with mark_call():
                torch.tanh(x @ x)
        torch.sigmoid(x)  # the harness's own work between calls, on the watching thread
        helper = threading.Thread(target=lambda: torch.relu(x))  # work handed to a thread is forward's
        helper.start()
        helper.join()
    calls, ops = watched_ops(profile)
    assert calls == 3
    assert ops["tanh"] == 3 and ops["mm"] == 3 and ops["relu"] == 1
    assert "sigmoid" not in ops
