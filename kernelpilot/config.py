"""kernelpilot's settings: defaults < `~/.config/kernelpilot/config.toml` < `./kernelpilot.toml` < env < flags.

    model = "anthropic/claude-sonnet-4-5"   # any litellm model string, or "replay:PATH"
    api_base = "http://localhost:8000/v1"    # a local vLLM / Ollama server
    skill = "cuda"
    max_turns = 50
    budget_usd = 5.0
    temperature = 0.7
    ncu = true                               # Nsight Compute counters for passing CUDA candidates

    [shell]
    default = "ask"                          # allow | ask | deny (headless: ask means deny)
    allow = ["nvcc --version", "nvidia-smi*"]
    deny = ["rm *"]

Env: `KERNELPILOT_MODEL`; provider keys (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …) are read by litellm.
Tables other than `[shell]` (e.g. the TUI's `[keys]`) belong to other parts and are ignored here.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelpilot.errors import UsageError
from kernelpilot.harness.protocol import DEFAULT_POLICY

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SHELL_DEFAULTS = ("allow", "ask", "deny")


@dataclass(frozen=True)
class Config:
    model: str | None = None
    skill: str | None = None
    device: str | None = None
    policy: str = DEFAULT_POLICY
    max_turns: int = 50
    budget_usd: float | None = None
    max_minutes: float | None = None
    api_base: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    tool_protocol: str = "auto"
    ncu: bool = True
    sessions_root: str = ".kernelpilot/sessions"
    shell_default: str = "ask"
    shell_allow: tuple[str, ...] = ()
    shell_deny: tuple[str, ...] = ()

    @property
    def sampling(self) -> dict[str, Any]:
        values = {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}
        return {k: v for k, v in values.items() if v is not None}

    def override(self, **values: Any) -> Config:
        """A copy with every value that is not None replaced (how flags win)."""
        return dataclasses.replace(self, **{k: v for k, v in values.items() if v is not None})


def user_config_path() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "kernelpilot" / "config.toml"


def _from_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{path}: not valid TOML ({error})") from None
    fields = {f.name for f in dataclasses.fields(Config)} - {"shell_default", "shell_allow", "shell_deny"}
    values = {}
    for key, value in data.items():
        if isinstance(value, dict):
            continue
        if key not in fields:
            raise UsageError(f"{path}: unknown setting '{key}' (known: {', '.join(sorted(fields))})")
        values[key] = value
    shell = data.get("shell", {})
    if "default" in shell:
        if shell["default"] not in SHELL_DEFAULTS:
            raise UsageError(f"{path}: [shell] default must be one of {', '.join(SHELL_DEFAULTS)}")
        values["shell_default"] = shell["default"]
    for kind in ("allow", "deny"):
        if kind in shell:
            values[f"shell_{kind}"] = tuple(str(p) for p in shell[kind])
    return values


def load_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for path in (user_config_path(), (cwd or Path.cwd()) / "kernelpilot.toml"):
        values |= _from_toml(path)
    if environ.get("KERNELPILOT_MODEL"):
        values["model"] = environ["KERNELPILOT_MODEL"]
    try:
        return Config(**values)
    except TypeError as error:
        raise UsageError(f"bad configuration: {error}") from None
