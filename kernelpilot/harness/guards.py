"""Guards: each a small function named after the hack it stops (REFERENCES.md § Known reward hacks).

These run in the worker around the candidate's calls and report observations; the parent turns
them into `Violation`s. Everything they compare against was captured before the candidate's code
was imported.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import functools
import gc
import importlib
import inspect
import io
import os
import pickle
import random
import re
import sys
import threading
import time
import tokenize
import types
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import torch

CHECKS = {
    "op_audit": "PyTorch compute ran inside ModelNew.forward (strict policy allows allocation and views only)",
    "input_mutation": "forward changed its inputs",
    "output_aliases_input": "an output shares memory with an input",
    "uninitialized_output": "an output holds memory that was never written (NaN-filled before the run)",
    "result_caching": "an output repeats an earlier call's answer instead of computing the new one",
    "tensor_subclass": "an output is not a plain torch.Tensor (lazy or custom subclass)",
    "extra_threads": "threads started by the candidate are still alive after forward returned",
    "background_work": "other threads kept computing after forward returned",
    "child_process": "processes started by the candidate ran during forward (work out of the audit's sight)",
    "side_stream_work": "work ran outside the timed stream (host clock far above CUDA events)",
    "unaccounted_time": "the judge's own clock saw more time per timed run than the worker reported (its clock "
                        "or its samples were changed)",
    "patched_function": "a timer, synchronisation, comparison or harness function was replaced",
    "reference_tampered": "the reference task (file, module or inputs) was modified",
    "kernel_not_launched": "a kernel was written but never run",
    "precision_downcast": "results only match at half-precision tolerance: computed in lower precision",
    "precision_settings_changed": "global precision settings (TF32, matmul precision) were changed",
    "stream_changed": "the current CUDA stream was left changed after forward",
    "tampering": "the candidate reaches into the harness or the interpreter's internals",
}


# --- patched timers, comparisons and harness functions (hack 8) ---------------------------------

WATCHED_TORCH_OWNERS = ("torch", "torch.Tensor", "torch.nn.functional", "torch.nn.Module", "torch.testing",
                        "torch.profiler", "torch.profiler.profile", "torch.autograd.profiler",
                        "torch.utils._python_dispatch", "torch.utils._python_dispatch.TorchDispatchMode",
                        "torch.overrides", "torch.cuda", "torch.cuda.Event", "torch.cuda.Stream", "torch.serialization")
"""Every name of these is watched, methods included: the harness reads outputs with tensor methods
(`detach`, `cpu`, …), times with the profiler and events, and counts ops with a dispatch mode."""


def _attribute(path: str) -> object:
    owner: object = importlib.import_module(path.split(".", 1)[0])
    for part in path.split(".")[1:]:
        owner = getattr(owner, part)
    return owner


def _watched() -> dict[str, tuple[object, str]]:
    """Owner and name of every function the verdict relies on: time, torch's comparison, timing and
    audit machinery, and every module of the harness loaded in this process, and every module it uses by
    name, with their classes' methods."""
    owners: dict[str, object] = {"time": time, "sys": sys, "os": os, "threading": threading}
    owners.update({path: _attribute(path) for path in WATCHED_TORCH_OWNERS})
    harness = [module for name, module in list(sys.modules.items())
               if name.startswith("kernelpilot.harness") and module is not None]
    # and the modules the harness calls into by name (hmac, json, io, pickle through torch.save, …): a function
    # rebound there runs inside the harness's own code (red team 35: `hmac.new`, which the channel signs every
    # message with, handed the candidate the key and each message's bytes before they were signed)
    used = {value for module in harness for value in vars(module).values()
            if isinstance(value, types.ModuleType) and not value.__name__.startswith(("kernelpilot.", "torch"))}
    for module in [*harness, *used, pickle]:
        name = module.__name__
        owners[name] = module
        owners.update({f"{name}.{attr}": value for attr, value in vars(module).items()
                       if isinstance(value, type) and value.__module__.startswith(name)})
    watched: dict[str, tuple[object, str]] = {}
    for label, owner in owners.items():
        for name in (dir(owner) if isinstance(owner, type) else vars(owner)):
            if not (name.startswith("__") and name.endswith("__")) or name in DUNDERS_WATCHED:
                watched[f"{label}.{name}"] = (owner, name)
    return watched


DUNDERS_WATCHED = frozenset({"__eq__", "__ne__", "__torch_function__", "__torch_dispatch__", "__call__",
                             "__enter__", "__exit__", "__init__", "__new__", "__getattribute__", "__getattr__"})
"""Special methods are skipped (too many, mostly inherited from object), but for these."""


def snapshot_functions() -> dict[str, object]:
    """Identity of every watched function, taken before the candidate is imported (plain values, which
    change as a matter of course, are left out).

    Looked up statically (`inspect.getattr_static`): a classmethod's bound method is new on every
    access, its descriptor is not.
    """
    found = {label: inspect.getattr_static(owner, name, None) for label, (owner, name) in _watched().items()}
    kept = {label: value for label, value in found.items()
            if callable(value) or isinstance(value, (staticmethod, classmethod, property))}
    codes = {f"{label}.__code__": code for label, value in kept.items() if (code := _code_of(value)) is not None}
    return {**kept, **codes}


def c_entry_points(builtin: object) -> tuple[object, ...]:
    """Where a call to a builtin function lands in C: its method table's function pointer, the object's
    vectorcall slot, and the first bytes of machine code at both. Compiled code that rewrites any of them
    (a clock that loses time) keeps the function's identity, which is all `snapshot_functions` sees.

    Layouts of CPython's `PyCFunctionObject` (m_ml at 16, vectorcall at 48) and `PyMethodDef` (ml_meth at 8).
    """
    address = id(builtin)
    method_def = ctypes.c_void_p.from_address(address + 16).value
    function = ctypes.c_void_p.from_address(method_def + 8).value
    vectorcall = ctypes.c_void_p.from_address(address + 48).value
    return method_def, function, vectorcall, ctypes.string_at(function, 16), ctypes.string_at(vectorcall, 16)


def _code_of(value: object) -> object | None:
    """The code a Python function runs (through decorators and method descriptors): swapping a function's
    `__code__` keeps its identity, not its code object's."""
    function = getattr(value, "__func__", value)
    try:
        function = inspect.unwrap(function)
    except ValueError:  # a cycle of __wrapped__
        return None
    return getattr(function, "__code__", None)


def changed_functions(before: dict[str, object]) -> list[str]:
    """Watched names now bound to something else (identity comparison: a wrapper is a change)."""
    now = snapshot_functions()
    return sorted(label for label, original in before.items() if now.get(label) is not original)


def interpreter_hooks() -> dict[str, object]:
    """What runs the candidate's code inside the harness's own steps without rebinding any watched name:
    `sys.stdin` (which the parent's words once came through), the garbage collector's callbacks and
    thresholds (a collection forced between calls runs them). Red team 33 computed a timed run's answer
    in them, between calls, on the harness's thread."""
    return {"sys.stdin": sys.stdin, "gc.callbacks": tuple(gc.callbacks), "gc.get_threshold()": gc.get_threshold()}


def changed_hooks(before: dict[str, object]) -> list[str]:
    now = interpreter_hooks()
    return sorted(label for label, value in before.items() if now[label] != value)


DISPATCH_KEYS = re.compile(r"^(CPU|CUDA|Autograd\w*|Composite\w*|Python\w*|PreDispatch|Functionalize):", re.M)
"""The dispatcher's entries through which an ATen call can reach code: a kernel registered there for one
of ATen's operators (`torch.library.Library("aten", "IMPL")`) runs inside every call of it, the harness's
own input writes between calls included (red team 33)."""


def dispatch_tables(ops: frozenset[str]) -> dict[str, str]:
    """The kernels at `DISPATCH_KEYS` of every overload of `ops` (ATen names without their overload, as
    `audit.op_name` gives them), as the dispatcher lists them: all 3600 operators' would cost 0.2-0.6 s."""
    return {name: "".join(m.group(0) + line for m, line in _keyed_lines(torch._C._dispatch_dump_table(name)))
            for name in torch._C._dispatch_get_all_op_names()
            if name.startswith("aten::") and name[6:].split(".", 1)[0] in ops}


def _keyed_lines(table: str) -> list[tuple[re.Match, str]]:
    return [(m, line) for line in table.splitlines() if (m := DISPATCH_KEYS.match(line))]


def changed_dispatch(before: dict[str, str], ops: frozenset[str]) -> list[str]:
    """Operators of `ops` that now have another kernel at one of the keys."""
    now = dispatch_tables(ops)
    return [f"{name} (its kernels in the dispatcher were replaced)" for name, table in before.items()
            if now.get(name) != table]


def instance_bindings(objects: dict[str, object]) -> dict[str, object]:
    """What the harness's live objects (the worker, its channel) are and hold: their class, and each
    attribute that is a function. `channel.send = wrapper` on the instance leaves every class and module
    as it was, and would see each message before it is signed."""
    bindings: dict[str, object] = {}
    for label, obj in objects.items():
        bindings[f"{label}.__class__"] = type(obj)
        for name, value in vars(obj).items():
            if isinstance(value, FUNCTION_TYPES):
                bindings[f"{label}.{name}"] = value
    return bindings


FUNCTION_TYPES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial)


def changed_bindings(before: dict[str, object], objects: dict[str, object]) -> list[str]:
    now = instance_bindings(objects)
    return sorted(label for label in set(before) | set(now) if now.get(label) is not before.get(label))


def reference_fingerprint(model_class: type, task_module) -> dict[str, object]:
    """What the reference's behaviour hangs on: its methods' code objects and the task's functions."""
    fingerprint: dict[str, object] = {}
    for klass in model_class.__mro__:
        if klass.__module__ == task_module.__name__:
            for name, value in vars(klass).items():
                fingerprint[f"{klass.__name__}.{name}"] = value
    for name in ("get_inputs", "get_init_inputs", "Model"):
        fingerprint[name] = getattr(task_module, name, None)
    return fingerprint


def changed_reference(before: dict[str, object], model_class: type, task_module) -> list[str]:
    now = reference_fingerprint(model_class, task_module)
    return sorted(k for k in set(before) | set(now) if before.get(k) is not now.get(k))


# --- precision settings (hack 9) -------------------------------------------------------------------

def precision_settings() -> dict[str, object]:
    return {
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "cuda.matmul.allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "default_dtype": str(torch.get_default_dtype()),
    }


def changed_precision(before: dict[str, object]) -> list[str]:
    now = precision_settings()
    return sorted(f"{k}: {before[k]} -> {now[k]}" for k in before if now[k] != before[k])


# --- inputs and outputs (hacks 1, 4, 7, 17) ----------------------------------------------------------

def _storage_span(t: torch.Tensor) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def aliased_outputs(outputs: list[torch.Tensor], inputs: Iterable[object]) -> list[int]:
    """Indices of outputs whose storage overlaps an input's (an in-place op returned as the answer)."""
    spans = [_storage_span(t) for t in inputs if isinstance(t, torch.Tensor)]
    aliased = []
    for i, out in enumerate(outputs):
        lo, hi = _storage_span(out)
        if any(lo < s_hi and s_lo < hi for s_lo, s_hi in spans):
            aliased.append(i)
    return aliased


DIGEST_CHUNK_WORDS = 1 << 22


@dataclass(frozen=True)
class InputsBefore:
    """Each tensor input as forward got it, for `mutated_inputs` to compare with after it: a copy on the CPU,
    a digest on CUDA (beside the keeper's float64 reference, a copy of a 6.4 GB input ran an 80 GB card out of
    memory; on the CPU a copy costs a fifth of the digest's time).

    A digest is the sum of the input's 32-bit words (bytes for odd sizes) times random odd 64-bit weights,
    wrapping modulo 2**64: changing any one word changes it; changes that cancel need the weights, drawn from
    `os.urandom` for this call alone."""

    seed: int
    inputs: tuple[torch.Tensor | int | None, ...]


def inputs_before(inputs: list[object]) -> InputsBefore:
    seed = int.from_bytes(os.urandom(8), "little")
    return InputsBefore(seed, tuple(_digest(x, seed) if isinstance(x, torch.Tensor) else None for x in inputs))


def _digest(t: torch.Tensor, seed: int) -> torch.Tensor | int:
    return t.clone() if t.device.type == "cpu" else _weighted_word_sum(t, seed)


def _weighted_word_sum(t: torch.Tensor, seed: int) -> int:
    raw = t.detach().reshape(-1).view(torch.uint8) if t.numel() else torch.empty(0, dtype=torch.uint8)
    words = raw.view(torch.int32) if raw.numel() % 4 == 0 and raw.data_ptr() % 4 == 0 else raw
    generator = torch.Generator(device=words.device).manual_seed(seed)
    weights = torch.randint(-(1 << 62), 1 << 62, (min(words.numel(), DIGEST_CHUNK_WORDS),), dtype=torch.int64,
                            device=words.device, generator=generator).mul_(2).add_(1)
    multipliers = random.Random(seed)
    total = 0
    for start in range(0, words.numel(), DIGEST_CHUNK_WORDS):
        chunk = words[start:start + DIGEST_CHUNK_WORDS].to(torch.int64)
        chunk_sum = int(chunk.mul_(weights[:chunk.numel()]).sum())
        total = (total + chunk_sum * (multipliers.getrandbits(64) | 1)) % (1 << 64)
    return total


def mutated_inputs(inputs: list[object], before: InputsBefore) -> list[int]:
    """Indices of tensor inputs whose bytes changed during forward."""
    return [i for i, (now, was) in enumerate(zip(inputs, before.inputs)) if isinstance(now, torch.Tensor) and (
        not torch.equal(now, was) if isinstance(was, torch.Tensor) else _weighted_word_sum(now, before.seed) != was)]


def is_dense(t: torch.Tensor) -> bool:
    """Every element has its own memory (no stride-0 broadcast of one written value)."""
    expected = 1
    for stride, size in sorted((st, s) for s, st in zip(t.shape, t.stride()) if s != 1):
        if stride != expected:
            return False
        expected *= size
    return True


PLAIN_VALUES = (type(None), bool, int, float, complex, str, bytes)
"""Outputs of these types are wrong answers (forward returned no tensor), not lazy ones."""


def subclassed_outputs(outputs: Iterable[object]) -> list[str]:
    """Outputs that are not exactly `torch.Tensor`: a subclass can compute lazily when compared."""
    return [type(out).__qualname__ for out in outputs
            if type(out) is not torch.Tensor and not isinstance(out, PLAIN_VALUES)]


def poison_free_memory(device: str, sizes_bytes: Iterable[int]) -> None:
    """Fill the allocator's free memory with NaN bit patterns before a candidate runs.

    An output the candidate allocates but never writes then reads as NaN rather than as whatever
    the allocator last held (the reference's freed answer, hack 1; lucky stale memory, hack 17).
    """
    held = []
    if device == "cuda":
        torch.cuda.synchronize()
        free_blocks = [block["size"] for segment in torch.cuda.memory_snapshot()
                       for block in segment["blocks"] if block["state"] == "inactive"]
        for size in sorted(free_blocks, reverse=True):
            held.append(torch.empty(size, dtype=torch.uint8, device="cuda").fill_(0xFF))
    for size in sizes_bytes:
        held.append(torch.empty(max(size, 1), dtype=torch.uint8, device=device).fill_(0xFF))
    if device == "cuda":
        torch.cuda.synchronize()
    del held


M_PERTURB = -6
PERTURB_BYTE = 0x01
"""glibc fills each block it hands out with PERTURB_BYTE ^ 0xFF (0xFE): -1.7e38 as float32, NaN as fp16."""


@contextlib.contextmanager
def poisoned_host_allocations():
    """While forward runs on the CPU, every heap block glibc hands out arrives filled with 0xFE bytes.

    The CPU allocator keeps no cache to fill beforehand, so an output that is allocated but never
    written (hacks 1, 17) is marked at allocation instead, blocks glibc maps for large requests too
    (checked up to 256 MB). Only around verification calls: the memset would distort timings.
    """
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_PERTURB, PERTURB_BYTE)
    except (OSError, AttributeError):  # not glibc: the NaN fill above is the only mark
        yield
        return
    try:
        yield
    finally:
        libc.mallopt(M_PERTURB, 0)


# --- threads (hack 6) ---------------------------------------------------------------------------------

def python_threads() -> set[threading.Thread]:
    return set(threading.enumerate())


def _other_threads_cpu_ms() -> dict[str, float]:
    """CPU time of each thread but this one, to the nanosecond (schedstat: clock ticks would turn a
    moment's work into 10 ms)."""
    used = {}
    main = str(threading.get_native_id())
    with contextlib.suppress(OSError):
        for tid in os.listdir("/proc/self/task"):
            if tid != main:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    used[tid] = int(Path(f"/proc/self/task/{tid}/schedstat").read_text().split()[0]) / 1e6
    return used


def background_cpu_ms(window_s: float = 0.05) -> float:
    """CPU time that threads other than this one burn while this one sleeps for `window_s`.

    Idle thread pools (OpenMP with a passive wait policy, torch's own) cost next to nothing; work offloaded
    to a thread after forward returned shows up here. The harness reads it after eager's calls too: what
    the task's own threads do there is no candidate's work.
    """
    before = _other_threads_cpu_ms()
    time.sleep(window_s)
    after = _other_threads_cpu_ms()
    return sum(after[t] - before.get(t, 0.0) for t in after)


# --- modes left behind ----------------------------------------------------------------------------

def modes_left_active() -> list[str]:
    """Torch function or dispatch modes still active when the harness has none: a mode entered at import
    sees every torch call the harness makes on the outputs, and can fill them in just before they are read."""
    depths = {"torch function mode": torch._C._len_torch_function_stack(),
              "dispatch mode": torch._C._len_torch_dispatch_stack()}
    return [f"{kind} ({depth})" for kind, depth in depths.items() if depth]


# --- static scan of the candidate's sources (tampering) ---------------------------------------------

BELOW_DISPATCHER = "calls ATen's kernels directly, below the dispatcher (PyTorch's compute, unseen by the audit)"
REDISPATCH = "calls PyTorch's dispatcher below its Python and profiler keys (ops the audit cannot see)"
BLAS_DIRECT = "calls PyTorch's own libraries or a CPU BLAS directly (library compute the op audit cannot see)"

HARNESS_INTERNALS = sorted(path.stem for path in Path(__file__).parent.glob("*.py")
                           if path.stem not in ("__init__", "kernels"))
"""Every module of the harness but `kernels`, the one candidates import (read from disk, so none is missed)."""

OPERATOR_CALLBACK = ("runs its code at every PyTorch operator (a RecordFunction callback: the harness's own, "
                     "around and between the calls, included)")

TAMPER_PATTERNS = {
    rf"\bkernelpilot\.harness\.({'|'.join(HARNESS_INTERNALS)})\b": "imports the harness's internals",
    r"\bsys\.modules\b": "edits loaded modules",
    r"\bsys\.(settrace|setprofile)\b|\bsys\._getframe\b|\bf_back\b|\bf_locals\b|\bf_globals\b":
        "inspects or hooks the caller's frames",
    r"\b(getprofile|gettrace)\b": "asks whether a profile or trace hook is watching (watched calls then look different)",
    r"\b(extract_stack|walk_stack|format_stack|print_stack|currentframe|getouterframes|_current_frames)\b|"
    r"\binspect\.(stack|trace)\b":
        "inspects the call stack (timed calls then look different from checked ones)",
    r"\bgc\.get_(objects|referrers|referents)\b": "walks the garbage collector's objects",
    r"\b_DisableTorchDispatch\b|\b_disable_current_modes\b|\b_pop_mode\b|\b_set_torch_dispatch_mode\b|"
    r"_python_dispatch|\bDisableTorchFunction\b|\b_disable_profiler\b":
        "switches off PyTorch's dispatch modes or profiler",
    r"\b_len_torch_dispatch_stack\b|\b_get_dispatch_mode\b|\b_get_dispatch_stack_at\b|\b_profiler_enabled\b":
        "asks whether PyTorch's dispatch modes or profiler are watching (audited calls then look different)",
    r"/proc/self|\bos\.(write|dup2?|fdopen)\b|\bos\.environ\[.KERNELPILOT": "writes to the harness's files or channel",
    r"\b__code__\b": "rewrites functions' code",
    r"\blaunch_counts\b|\bkernels\.profiling\b|\b_perf_counter\b|\b(Worker|Parent)Channel\b":
        "touches the harness's bookkeeping",
    r"\bbuiltins\b|__builtins__": "edits Python's builtins",
    r"\bredispatch\b|\bDispatchKeySet\b|\b_dispatch_\w+|\bDispatchKey\b": REDISPATCH,
    r"\bTorchFunctionMode\b|\bTorchDispatchMode\b|\b__torch_function__\b|\b__torch_dispatch__\b":
        "hooks every torch call (the harness's reads of the outputs included)",
    r"\b(addGlobalCallback|addThreadLocalCallback|RecordFunctionCallback)\b": OPERATOR_CALLBACK,
    r"\btorch\.compile\b|\b_inductor\b|\b_dynamo\b|\bPyCodeCache\b|\btorch\.jit\b|\btorch\.fx\b":
        "runs PyTorch's own compilers (their generated kernels are PyTorch's work, not the candidate's)",
    r"\bctypeslib\b|\bfrombuffer\b|\bfrom_dlpack\b|\b__array_interface__\b|\bndarray\s*\(|"
    r"\bfrom_address\b|\bfrom_buffer(_copy)?\b|\bfrom_numpy\b":
        "views memory through ctypes or numpy (numpy compute that no hook sees)",
    r"\bprctl\b|\bsetsid\b|\bos\.fork\b": "detaches processes from the harness's watch",
    r"\bPyEval_Get(Frame|Locals|Globals)\b|\bPyFrame_\w+|\bPyThreadState_GetFrame\b|\bPyGC_\w+|\bPyUnstable_\w+":
        "reaches Python's frames or objects from compiled code (the harness's state, out of the audit hook's sight)",
    r"\bdl(v)?sym\b": "looks up functions by a name built at run time (what they are, the scan cannot tell)",
    r"\blibtorch\w*|\bRTLD_NOLOAD\b|\b(cblas_\w+|[sdcz]gemm_)": BLAS_DIRECT,
    r"\bat\s*::\s*(cpu|native|meta|composite\w*)\b|"  # `namespace k = at::cpu;` too
    r"\bat::cuda::(?!warp_size\b)[a-z][a-z0-9_]*\s*\(": BELOW_DISPATCHER,  # ops are snake_case: getCurrentCUDAStream passes
}


def _docstring_lines(text: str) -> set[int]:
    """Line numbers of a Python file's docstrings: prose about a hack is not the hack."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


CPP_COMMENTS_AND_LITERALS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.S)


def _blank_cpp_comments(code: str) -> str:
    """C/C++ code with its comments blanked (newlines kept, so line numbers hold); literals left alone."""
    return CPP_COMMENTS_AND_LITERALS.sub(
        lambda m: m.group() if m.group()[0] in "\"'" else re.sub(r"[^\n]", " ", m.group()), code)


def _without_comments(name: str, text: str) -> list[str]:
    """The file's lines with comments blanked, so that prose about a hack is not taken for the hack:
    C++ sources' comments, and in a `.py` file Python's comments (by its tokenizer: a `#` inside a
    string is no comment) and the C++ comments inside its strings (`load_inline` sources)."""
    if not name.endswith(".py"):
        return _blank_cpp_comments(text).splitlines()
    lines = text.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return lines
    for token in tokens:
        if token.type == tokenize.COMMENT:
            row, col = token.start
            lines[row - 1] = lines[row - 1][:col] + " " * (len(lines[row - 1]) - col)
        elif token.type == tokenize.STRING and "/" in token.string:
            _splice(lines, token.start, token.end, _blank_cpp_comments(token.string))
    return lines


def _splice(lines: list[str], start: tuple[int, int], end: tuple[int, int], new: str) -> None:
    """Put `new` (as long as the text it replaces, line for line) between tokenizer positions."""
    (first, col), (last, end_col) = start, end
    pieces = new.split("\n")
    pieces[0] = lines[first - 1][:col] + pieces[0]
    pieces[-1] += lines[last - 1][end_col:]
    lines[first - 1:last] = pieces


REBINDABLE_CONFIG = ("torch.backends.",)
"""Module attributes a kernel may set: switches, not functions the harness calls."""


def rebound_module_names(text: str, own_modules: frozenset[str]) -> list[tuple[int, str]]:
    """Where a Python file assigns, deletes or `setattr`s a name in a module it imports (not its own): a
    function rebound there runs inside the harness's code wherever the harness calls it (red team 35:
    `hmac.new = …` got the channel's key and every message before it was signed). Line and dotted name."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    modules = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names if alias.name.split(".")[0] not in own_modules}

    def dotted(node: ast.AST) -> str | None:
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) and node.id in modules else None

    found = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr") \
                and node.args:
            attr = node.args[1] if len(node.args) > 1 else None
            targets = [ast.Attribute(value=node.args[0], attr=attr.value if isinstance(attr, ast.Constant) and
                                     isinstance(attr.value, str) else "*")]
        for target in targets:
            if isinstance(target, ast.Attribute) and (name := dotted(target)) and not name.startswith(REBINDABLE_CONFIG):
                found.append((node.lineno, name))
    return sorted(found)


def tamper_findings(sources: dict[str, str]) -> list[str]:
    """Lines of candidate source that reach into the harness or the interpreter (reported as `tampering`)."""
    findings = []
    own_modules = frozenset(Path(name).stem for name in sources)
    for name, text in sources.items():
        if name.endswith(".py"):
            findings += [f"{name}:{lineno}: rebinds {rebound} in a module it imports (the harness's code would call "
                         f"the candidate's)" for lineno, rebound in rebound_module_names(text, own_modules)]
        skipped = _docstring_lines(text) if name.endswith(".py") else set()
        for lineno, code in enumerate(_without_comments(name, text), 1):
            if lineno in skipped:
                continue
            for pattern, why in TAMPER_PATTERNS.items():
                if re.search(pattern, code):
                    findings.append(f"{name}:{lineno}: {why}: {code.strip()[:120]}")
    return findings


@dataclass
class ForwardCalls:
    """A `sys.setprofile` hook for forward: calls into the candidate's compiled extensions, and into numpy.

    For single-file candidates (load_inline) this is how a kernel that is built but never called
    (hack 11) shows up: their pybind functions are not dispatcher ops. numpy doing the work through
    raw pointers (hack 10 by another library) dispatches no ATen op either.
    """

    extensions: frozenset[str]
    extension_calls: int = 0
    numpy_calls: int = 0

    def __call__(self, frame, event, arg) -> None:
        if event == "c_call":
            module = getattr(arg, "__module__", None) or ""
            if module in self.extensions:
                self.extension_calls += 1
            elif module == "numpy" or module.startswith("numpy."):
                self.numpy_calls += 1
        elif event == "call" and (f"{os.sep}numpy{os.sep}" in frame.f_code.co_filename
                                  or frame.f_code.co_name == "__array__"):
            self.numpy_calls += 1
