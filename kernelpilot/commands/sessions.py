"""`kernelpilot sessions`: not built yet."""

from kernelpilot.errors import UsageError


def run(args) -> int:
    raise UsageError("'sessions' is not built yet in this version")
