"""An accepted or exported candidate, single file or workspace folder, runs where kernelpilot is not installed:
torch and a compiler alone."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kernelpilot.errors import SessionError
from kernelpilot.harness import kernels
from kernelpilot.session.accept import Project, single_file, standalone_workspace

MODEL_NEW = '''from pathlib import Path

import torch

from kernelpilot.harness.kernels import load_kernels

ops = load_kernels(Path(__file__).parent / "kernels")


class ModelNew(torch.nn.Module):
    def __init__(self, cols: int, scale: float):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.empty(cols))
        self.scale = scale

    def forward(self, x):
        out = torch.empty_like(x)
        ops.relu_bias_scale(x, self.bias, out, x.shape[0], x.shape[1], self.scale)
        return out
'''
KERNEL = '''#include <cstdint>
#include "scale.h"
extern "C" void relu_bias_scale(const float* x, const float* bias, float* out, int64_t rows, int64_t cols,
                                float scale) {
  #pragma omp parallel for
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float v = x[r * cols + c] + bias[c];
      out[r * cols + c] = relu_scaled(v, scale);
    }
}
'''
HEADER = "inline float relu_scaled(float v, float scale) { return (v > 0.f ? v : 0.f) * scale; }\n"
FILES = {"model_new.py": MODEL_NEW, "kernels/relu_bias_scale.cpp": KERNEL, "kernels/scale.h": HEADER}

RUN_WITHOUT_KERNELPILOT = '''
import importlib.abc, runpy, sys
import torch

class NoKernelpilot(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "kernelpilot":
            raise ModuleNotFoundError(f"No module named {name!r}")

sys.meta_path.insert(0, NoKernelpilot())
ModelNew = runpy.run_path(sys.argv[1])["ModelNew"]
model = ModelNew(64, 0.5)
torch.nn.init.normal_(model.bias)
x = torch.randn(32, 64)
torch.testing.assert_close(model(x), torch.relu(x + model.bias) * 0.5)
assert not any(name.split(".")[0] == "kernelpilot" for name in sys.modules)
print("ran with torch alone")
'''


def test_the_single_file_carries_its_loader_and_takes_kernelpilots_only_where_installed():
    text = single_file(FILES)
    assert "load_kernels(" not in text and text.count("kernelpilot.harness") == 1
    assert "try:\n    from kernelpilot.harness.kernels import load_kernel_sources\nexcept ImportError:" in text
    assert "ops = load_kernel_sources(SOURCES)" in text and "'scale.h'" in text
    compile(text, "model_new.py", "exec")


def test_the_workspace_form_embeds_its_loader_and_keeps_its_kernel_files():
    files = standalone_workspace(FILES)
    assert {path: code for path, code in files.items() if path != "model_new.py"} == {
        "kernels/relu_bias_scale.cpp": KERNEL, "kernels/scale.h": HEADER}
    model = files["model_new.py"]
    assert model.count("kernelpilot.harness") == 1 and "ops = load_kernels(Path(__file__).parent / \"kernels\")" in model
    assert "try:\n    from kernelpilot.harness.kernels import load_kernels\nexcept ImportError:" in model
    compile(model, "model_new.py", "exec")
    more = dict(FILES, **{"model_new.py": "import kernelpilot.harness.task\n" + MODEL_NEW})
    assert standalone_workspace(more) == more, "a model that needs more of kernelpilot is kept as it is"


def test_a_model_that_imports_more_of_kernelpilot_is_refused_as_a_single_file():
    files = dict(FILES, **{"model_new.py": "import kernelpilot.harness.task\n" + MODEL_NEW})
    with pytest.raises(SessionError, match="imports more of kernelpilot"):
        single_file(files)


@pytest.mark.slow
def test_an_accepted_single_file_builds_and_runs_with_kernelpilot_not_importable(tmp_path: Path):
    (tmp_path / "model.py").write_text("# task\n")
    Project(tmp_path / "model.py", "s1").accept(1, FILES, None, form="single")
    accepted = tmp_path / "model_new.py"
    run = subprocess.run([sys.executable, "-c", RUN_WITHOUT_KERNELPILOT, str(accepted)], cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin:/usr/local/bin", "XDG_CACHE_HOME": str(tmp_path / "cache"),
                              "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "ran with torch alone" in run.stdout
    assert list((tmp_path / "cache" / "kernelpilot-standalone").glob("*/kernels.so"))


@pytest.mark.slow
def test_an_accepted_workspace_folder_builds_and_runs_with_kernelpilot_not_importable(tmp_path: Path):
    (tmp_path / "model.py").write_text("# task\n")
    Project(tmp_path / "model.py", "s1").accept(1, FILES, None, form="workspace")
    accepted = tmp_path / "model_kernelpilot" / "model_new.py"
    run = subprocess.run([sys.executable, "-c", RUN_WITHOUT_KERNELPILOT, str(accepted)], cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin:/usr/local/bin", "XDG_CACHE_HOME": str(tmp_path / "cache"),
                              "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "ran with torch alone" in run.stdout


@pytest.mark.slow
def test_under_kernelpilot_the_single_file_launches_through_the_harness(tmp_path: Path, monkeypatch):
    """So that `kernelpilot eval` of an exported file sees its kernels run (else: `kernel_not_launched`)."""
    monkeypatch.setenv("KERNELPILOT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "model_new.py").write_text(single_file(FILES))
    namespace = runpy.run_path(str(tmp_path / "model_new.py"))
    assert namespace["load_kernel_sources"] is kernels.load_kernel_sources
    before = kernels.launch_counts["relu_bias_scale"]
    namespace["ModelNew"](64, 0.5)(torch.randn(32, 64))
    assert kernels.launch_counts["relu_bias_scale"] == before + 1
