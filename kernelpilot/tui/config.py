"""Where the TUI keeps what users choose: key remaps (config.toml) and remembered state (state.toml).

Both live in `$XDG_CONFIG_HOME/kernelpilot/` (default `~/.config/kernelpilot/`), so tests can redirect them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from kernelpilot.config import user_config_path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib


def config_dir() -> Path:
    return user_config_path().parent


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def load_keymap() -> dict[str, str]:
    """`[keys]` of config.toml: binding id → key(s), e.g. `accept = "ctrl+a"`."""
    keys = _read_toml(user_config_path()).get("keys", {})
    return {str(binding_id): str(key) for binding_id, key in keys.items()}


def load_state() -> dict[str, Any]:
    return _read_toml(config_dir() / "state.toml")


def save_state(**changes: str | bool | float) -> None:
    """Merge `changes` into state.toml (flat keys with scalar values: JSON scalars are valid TOML)."""
    state = load_state() | changes
    path = config_dir() / "state.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key} = {json.dumps(value)}\n" for key, value in sorted(state.items())))
