"""The program Nsight Compute profiles: `python -m kernelpilot.harness.ncu_target JOB_JSON`.

One warm-up forward of the candidate (first-call setup stays out of the report), then one forward
between `cudaProfilerStart` and `cudaProfilerStop`, which ncu is told to profile and nothing else.
It runs only for a candidate the harness has already judged; what it reports is shown, never rewarded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from kernelpilot.harness.task import import_file, load_task_module, made_on, make_inputs


def main() -> None:
    job = json.loads(sys.argv[1])
    task = load_task_module(Path(job["task_path"]))
    model_file = Path(job["model_file"])
    sys.path.insert(0, str(model_file.parent))
    candidate = import_file(model_file, "kernelpilot_candidate")
    init_inputs = task.get_init_inputs()
    model = made_on("cuda", job["init_seed"], lambda: candidate.ModelNew(*init_inputs)).to("cuda")
    inputs = make_inputs(task, job["seed"], "cuda")
    with torch.no_grad():
        model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    main()
