"""`kernelpilot optimize`: not built yet."""

from kernelpilot.errors import UsageError


def run(args) -> int:
    raise UsageError("'optimize' is not built yet in this version")
