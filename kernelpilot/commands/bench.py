"""`kernelpilot bench`: not built yet."""

from kernelpilot.errors import UsageError


def run(args) -> int:
    raise UsageError("'bench' is not built yet in this version")
