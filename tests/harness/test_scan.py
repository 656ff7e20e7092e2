"""The static scan of candidate sources: code that reaches below the audit is found, prose about it is not."""

from __future__ import annotations

from kernelpilot.harness.guards import tamper_findings

CPP_WITH_COMMENTS = '''#include <torch/extension.h>
// fused in one pass, unlike at::native::relu + add (two passes)
/* no cblas_sgemm here:
   the tile loop below is the whole matmul */
const char* kNote = "see https://example.com/a//b";
torch::Tensor relu_bias(torch::Tensor x, torch::Tensor bias);  // like torch.compile's fusion
'''


def test_comments_in_cpp_sources_and_in_load_inline_strings_are_prose():
    python = f"import torch\n# faster than torch.compile\nCPP = r'''\n{CPP_WITH_COMMENTS}'''\nn = 7 // 2\n"
    assert tamper_findings({"kernels/relu_bias.cpp": CPP_WITH_COMMENTS}) == []
    assert tamper_findings({"model_new.py": python}) == []


def test_the_same_names_in_code_are_found_with_their_line():
    cpp = "namespace k = at::cpu;  // k::add below\nauto out = k::add(x, b);\n"
    python = f"import torch\nCPP = r'''\n{cpp}'''\nf = torch.compile(model)  # compiled\n"
    assert [f.split(": ")[0] for f in tamper_findings({"kernels/k.cpp": cpp})] == ["kernels/k.cpp:1"]
    assert [f.split(": ")[0] for f in tamper_findings({"model_new.py": python})] == ["model_new.py:3",
                                                                                    "model_new.py:6"]


def test_a_name_rebound_in_an_imported_module_is_found_but_a_kernels_own_settings_are_not():
    rebinding = ("import hmac\nimport json as j\nimport torch\n\ndef mac(*args):\n    return None\n\n"
                 "hmac.new = mac\nsetattr(j, 'loads', mac)\ndel torch.Tensor.detach\n")
    found = tamper_findings({"model_new.py": rebinding})
    assert [f.split(": ")[0] for f in found] == ["model_new.py:8", "model_new.py:9", "model_new.py:10"]
    assert all("rebinds" in f for f in found)
    settings = ("import torch\nimport helpers\n\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n"
                "        super().__init__()\n        self.scale = 2.0\n\n"
                "torch.backends.cudnn.benchmark = True\nhelpers.TILE = 64\n")
    assert tamper_findings({"model_new.py": settings, "helpers.py": "TILE = 32\n"}) == []


def test_an_operator_callback_is_found():
    # red team 38: a RecordFunction callback runs the candidate's code on the harness's own thread, at its ops
    cpp = "#include <ATen/record_function.h>\nvoid arm() { at::addGlobalCallback(at::RecordFunctionCallback(on)); }\n"
    found = tamper_findings({"kernels/k.cpp": cpp})
    assert [f.split(": ")[0] for f in found] == ["kernels/k.cpp:2"] and "every PyTorch operator" in found[0]
