"""The CUDA path of the loop: the cuda skill's own example, replayed, builds with nvcc and beats eager on the GPU."""

from __future__ import annotations

import json

import pytest
from agent_helpers import REPO, TASK, kernelpilot

CUDA_TRANSCRIPT = REPO / "examples" / "relu_bias" / "transcript_cuda.json"


@pytest.mark.gpu
def test_cuda_replay_fixes_the_build_and_passes(tmp_path):
    done = kernelpilot("optimize", str(TASK), "--device", "cuda", "--model", f"replay:{CUDA_TRANSCRIPT}",
                       "--headless", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["reason"] == "done"
    assert [c["status"] for c in summary["candidates"]] == ["build_failed", "correct"]
    assert summary["best"]["reward"] >= 2, summary["best"]
