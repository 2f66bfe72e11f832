"""Reading the launcher's command line before the host parses it (one reader for every pre-check)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def flag_values(argv: Sequence[str], flag: str) -> list[str]:
    """The value of every ``flag X`` / ``flag=X`` in ``argv``, in order."""
    values = []
    for index, argument in enumerate(argv):
        if argument == flag and index + 1 < len(argv):
            values.append(argv[index + 1])
        elif argument.startswith(flag + "="):
            values.append(argument.split("=", 1)[1])
    return values


def flag_value(argv: Sequence[str], flag: str) -> str | None:
    """The value of the last ``flag X`` / ``flag=X`` in ``argv``, or None."""
    return (flag_values(argv, flag) or [None])[-1]


def task_names(argv: Sequence[str]) -> list[str]:
    """The names ``--tasks`` lists (comma-separated)."""
    return [name.strip() for name in (flag_value(argv, "--tasks") or "").split(",") if name.strip()]


def config_entries(config_path: str | None) -> list[dict[str, Any]]:
    """The entries of a ``--config`` YAML file, one per run (``[{}]`` without one, or when it cannot be read:
    the host reports that itself)."""
    if not config_path:
        return [{}]
    try:
        import yaml

        with open(config_path, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle)
    except (OSError, ValueError):
        return [{}]
    return [
        entry if isinstance(entry, dict) else {}
        for entry in (loaded if isinstance(loaded, list) else [loaded])
    ]


def run_values(arguments: Sequence[str], flags: Sequence[str]) -> list[dict[str, Any]]:
    """Each run's values of ``flags`` (abbreviated as argparse allows): the command line's over each entry of
    a ``--config`` YAML file, as the host merges them; [] for a flag without its value (the host says so)."""
    import argparse

    parser = argparse.ArgumentParser(add_help=False)
    for flag in (*flags, "--config"):
        parser.add_argument(flag, default=None)
    try:
        known, _ = parser.parse_known_args(list(arguments))
    except SystemExit:
        return []
    given = {key: value for key, value in vars(known).items() if value is not None and key != "config"}
    return [{**entry, **given} for entry in config_entries(known.config)]


def parse_model_args(model_args: str | None) -> dict[str, str]:
    """``k=v,k2=v2`` as the host splits it (values kept as text)."""
    parsed: dict[str, str] = {}
    for part in (model_args or "").split(","):
        if part.strip():
            key, _, value = part.partition("=")
            parsed[key.strip()] = value.strip()
    return parsed
