"""Fail fast on an unwritable ``--output_path`` (lmms-eval 0.7.3 finds out after all inference, and warns)."""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lmms_eval_tasks.host.argv import config_entries


def _named_output_paths(arguments: Sequence[str]) -> list[str]:
    """Output paths given on the command line (``--output_path``, also abbreviated as argparse allows)
    and in the ``output_path`` keys of a ``--config`` YAML file."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--output_path", action="append", default=[])
    parser.add_argument("--config", action="append", default=[])
    try:
        known, _ = parser.parse_known_args(list(arguments))
    except SystemExit:  # a flag without its value: the host reports it
        return []
    paths = [path for path in known.output_path if path]
    for config_path in known.config:
        paths += [
            entry["output_path"]
            for entry in config_entries(config_path)
            if isinstance(entry.get("output_path"), str) and entry["output_path"]
        ]
    return list(dict.fromkeys(paths))


def writability_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the folder ``path`` cannot be created or written (a probe file in it, or in its nearest existing
    ancestor, removed at once), or None."""
    target = Path(path)
    existing = target
    while not os.path.lexists(existing) and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        if existing == target:
            return f"{target} exists and is not a directory"
        return f"cannot create {target}: {existing} is not a directory"
    try:
        handle, probe = tempfile.mkstemp(prefix=".lmms_eval_tasks_write_check_", dir=existing)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        return f"cannot write into {existing} ({reason})"
    os.close(handle)
    os.unlink(probe)
    return None


def model_folder_problem(runs: Sequence[tuple[str, str | None]]) -> str | None:
    """One line refusing a run whose results folder ``<output_path>/<model name>`` would leave
    ``--output_path`` (``pretrained=..``), else None."""
    from lmms_eval_tasks.reporting.schema import model_folder_name

    for _, model_args in runs:
        if not model_args:
            continue
        name = model_folder_name(model_args)
        if name in (".", ".."):
            return (
                f"lmms_eval: --model_args {model_args}: lmms-eval names the results folder after the model "
                f"({name!r}), which would put them outside --output_path; give the model's folder as an "
                "absolute path or ending in its own name (e.g. ../my-model); no evaluation was started"
            )
    return None


def check_output_path(arguments: Sequence[str]) -> str | None:
    """A one-line error when an output path of this command line cannot be written, else None."""
    for path in _named_output_paths(arguments):
        problem = writability_problem(path)
        if problem is not None:
            return f"--output_path {path}: {problem}; no evaluation was started"
    return None
