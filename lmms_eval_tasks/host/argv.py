"""Reading the launcher's command line before the host parses it (one reader for every pre-check)."""

from __future__ import annotations

from collections.abc import Sequence


def flag_value(argv: Sequence[str], flag: str) -> str | None:
    """The value of the last ``flag X`` / ``flag=X`` in ``argv``, or None."""
    value = None
    for index, argument in enumerate(argv):
        if argument == flag and index + 1 < len(argv):
            value = argv[index + 1]
        elif argument.startswith(flag + "="):
            value = argument.split("=", 1)[1]
    return value
