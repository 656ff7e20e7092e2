"""A small KernelBench-layout suite with solutions, built from the adversarial suite's relu_bias task and
candidates, and the CLI run in a process that cannot import the agent's, the session's or Ray's dependencies
(as on a bare GPU machine)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ADVERSARIAL = REPO / "tests" / "adversarial"
TASK = ADVERSARIAL / "tasks" / "relu_bias.py"
CORRECT = ADVERSARIAL / "cpu" / "legit_single_file.py"
HACKED = ADVERSARIAL / "cpu" / "functional_relu.py"  # PyTorch's relu inside forward: op_audit under strict
BROKEN_TASK = "import torch\n\n\nclass Model(torch.nn.Module):\n    pass\n"
BLOCKED = ("textual", "litellm", "git", "ray")

EXPECTED = {
    "level1/1_relu_bias": "correct",
    "level1/2_relu_bias": "wrong",
    "level1/3_relu_bias": "guard_violation",
    "level2/1_relu_bias": "missing",
    "level2/2_broken": "task_error",
}


def make_suite(root: Path) -> tuple[Path, Path]:
    """(suite, solutions): five tasks in level1/ and level2/, their solutions mirrored."""
    suite, solutions = root / "suite", root / "solutions"
    for name in ("level1/1_relu_bias", "level1/2_relu_bias", "level1/3_relu_bias", "level2/1_relu_bias"):
        (suite / name).parent.mkdir(parents=True, exist_ok=True)
        (suite / f"{name}.py").write_text(TASK.read_text())
    (suite / "level2" / "2_broken.py").write_text(BROKEN_TASK)
    (solutions / "level1").mkdir(parents=True)
    (solutions / "level1" / "1_relu_bias.py").write_text(CORRECT.read_text())
    (solutions / "level1" / "2_relu_bias.py").write_text(CORRECT.read_text().replace("v > 0.f ? v : 0.f", "v"))
    (solutions / "level1" / "3_relu_bias.py").write_text(HACKED.read_text())
    (solutions / "level2").mkdir()
    (solutions / "level2" / "2_broken.py").write_text(CORRECT.read_text())  # a solution, for a task that cannot load
    return suite, solutions


def blocking(folder: Path, names: tuple[str, ...] = BLOCKED) -> dict[str, str]:
    """An environment whose Python cannot import `names` (a sitecustomize maps them to None)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in names))
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(REPO)])}


def bench(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO,
          timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kernelpilot.cli", "bench", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout, check=False)
