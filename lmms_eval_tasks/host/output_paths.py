"""Fail fast on an unwritable ``--output_path`` (lmms-eval 0.7.3 finds out after all inference, and warns)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lmms_eval_tasks.host.argv import run_values


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
    """A one-line error when an output path of this command line's runs (``--config`` entries included)
    cannot be written, else None."""
    for run in run_values(arguments, ("--output_path",)):
        path = run.get("output_path")
        problem = writability_problem(path) if isinstance(path, str) and path else None
        if problem is not None:
            return f"--output_path {path}: {problem}; no evaluation was started"
    return None
