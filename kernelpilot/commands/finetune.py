"""`kernelpilot finetune`: not built yet."""

from kernelpilot.errors import UsageError


def run(args) -> int:
    raise UsageError("'finetune' is not built yet in this version")
