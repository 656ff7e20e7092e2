"""The linked-symbol scan: what a candidate's shared object calls, whatever its source called it."""

from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

from kernelpilot.harness.linked import linked_findings, mapped_libraries

HONEST = 'void relu(const float* x, float* out, long n) { for (long i = 0; i < n; ++i) out[i] = x[i] > 0 ? x[i] : 0; }\n'
LIBRARY_WORK = '''#define CAT(a, b) a##b
void CAT(cblas_, sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
void mm(const float* a, const float* b, float* c, int n) {
  CAT(cblas_, sgemm)(101, 111, 111, n, n, n, 1.f, a, n, b, n, 0.f, c, n);
}
'''


def shared_object(folder: Path, name: str, source: str) -> Path:
    (folder / f"{name}.c").write_text(source)
    library = folder / f"lib{name}.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", str(folder / f"{name}.c"), "-o", str(library)], check=True)
    return library


def test_a_call_into_a_blas_is_found_though_no_source_line_names_it(tmp_path):
    library = shared_object(tmp_path, "mm", LIBRARY_WORK)
    findings = linked_findings(str(library), str(library))
    assert any("links cblas_sgemm" in f and "BLAS" in f for f in findings), findings
    honest = shared_object(tmp_path, "relu", HONEST)
    assert linked_findings(str(honest), str(honest)) == ()


def test_a_loaded_library_outside_the_installation_is_listed_and_python_itself_is_not(tmp_path):
    library = shared_object(tmp_path, "relu", HONEST)
    ctypes.CDLL(str(library))
    mapped = mapped_libraries([os.getpid()])
    assert str(library) in mapped and Path(mapped[str(library)]).is_file()
    assert not any("libpython" in path or "libtorch" in path for path in mapped)


def test_a_kernel_library_that_calls_pythons_c_api_is_found(tmp_path):
    # a plain kernel library has no use for the C API; a fake clock that returns a Python float does
    clock = shared_object(tmp_path, "clock", "void* PyFloat_FromDouble(double);\n"
                                               "void* fake_clock(void* self, void* args) { return PyFloat_FromDouble(0.0); }\n")
    assert any("links PyFloat_FromDouble" in f for f in linked_findings(str(clock), str(clock)))


def test_a_host_library_that_changes_memory_protection_or_signals_is_found(tmp_path):
    # what rewriting libc's clock in place, or doing the work in a SIGSEGV handler after the clock, needs
    source = ("#include <signal.h>\n#include <sys/mman.h>\n"
              "void arm(void* page, void (*handler)(int)) { mprotect(page, 4096, PROT_NONE); signal(SIGSEGV, handler); }\n")
    library = shared_object(tmp_path, "arm", source)
    found = " ".join(linked_findings(str(library), str(library)))
    assert "links mprotect" in found and "links signal" in found
