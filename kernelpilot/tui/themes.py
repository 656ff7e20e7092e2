"""Theme files: TOML tables mapping to `textual.theme.Theme` fields.

Shipped themes live in `themes/` at the repository root; users add their own in
`<config dir>/themes/*.toml` (a user theme with a shipped theme's name replaces it).
"""

from __future__ import annotations

import sys
from dataclasses import fields
from pathlib import Path

from textual.theme import Theme

from kernelpilot.tui.config import config_dir

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SHIPPED_THEMES = Path(__file__).resolve().parents[1] / "shipped" / "themes"
DEFAULT_THEME = "kernelpilot-dark"
_THEME_FIELDS = {f.name for f in fields(Theme)}


class ThemeFileError(ValueError):
    """A theme file that is not valid TOML or names fields a Theme does not have."""


def theme_from_file(path: Path) -> Theme:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ThemeFileError(f"{path}: {error}") from error
    unknown = set(data) - _THEME_FIELDS
    if unknown:
        raise ThemeFileError(f"{path}: unknown theme fields {', '.join(sorted(unknown))}")
    data.setdefault("name", path.stem)
    try:
        return Theme(**data)
    except (TypeError, ValueError) as error:
        raise ThemeFileError(f"{path}: {error}") from error


def load_themes() -> tuple[list[Theme], list[str]]:
    """Shipped then user themes, and one line per theme file that could not be used."""
    themes: dict[str, Theme] = {}
    problems = []
    for folder in (SHIPPED_THEMES, config_dir() / "themes"):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
            try:
                theme = theme_from_file(path)
            except ThemeFileError as error:
                problems.append(str(error))
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
