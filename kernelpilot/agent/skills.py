"""Skills: a directory with a `SKILL.md` whose text is the agent's system prompt (with the task).

`--skill NAME` looks in `./skills/`, `~/.config/kernelpilot/skills/` and the skills shipped with
kernelpilot, in that order, so a project can override a shipped skill; `--skill PATH` takes a directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kernelpilot.errors import UsageError

SKILL_FILE = "SKILL.md"
SHIPPED = Path(__file__).resolve().parents[1] / "shipped" / "skills"


def skill_dirs() -> list[Path]:
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "kernelpilot" / "skills"
    return [Path.cwd() / "skills", config, SHIPPED]


@dataclass(frozen=True)
class Skill:
    name: str
    path: Path
    text: str


def find_skill(ref: str) -> Skill:
    path = Path(ref).expanduser()
    if path.is_dir() or os.sep in ref:
        if not (path / SKILL_FILE).is_file():
            raise UsageError(f"no {SKILL_FILE} in skill directory {path}")
        return Skill(path.name, path.resolve(), (path / SKILL_FILE).read_text())
    for root in skill_dirs():
        if (root / ref / SKILL_FILE).is_file():
            return Skill(ref, (root / ref).resolve(), (root / ref / SKILL_FILE).read_text())
    known = sorted({p.parent.name for root in skill_dirs() if root.is_dir() for p in root.glob(f"*/{SKILL_FILE}")})
    raise UsageError(f"unknown skill '{ref}' (have: {', '.join(known) or 'none'}; or pass a skill directory)")
