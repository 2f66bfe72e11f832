"""A later complete run of the same setup supersedes an older run's pending marker (cleared on completing
the report); ``latest.json`` only moves forward (``reporting.schema.run_is_older``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework.saved_records import PENDING_SUFFIX

SETUP = ("model", "model_args", "limit")  # what makes two runs the same setup


def clear_superseded_pending(folder: Path, task: str, setup: Mapping[str, Any]) -> list[Path]:
    """Remove ``task``'s pending markers left in older run folders next to ``folder`` by runs of the same
    model, model_args and limit (this run's report replaces what they awaited); returns the removed paths."""
    from lmms_eval_tasks.reporting.schema import run_is_older, strict_loads

    removed: list[Path] = []
    for marker in sorted(folder.parent.glob(f"*/{task}{PENDING_SUFFIX}")):
        if marker.parent == folder or not run_is_older(marker.parent.name, folder.name):
            continue
        try:
            pending = strict_loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        args = pending.get("args") if isinstance(pending, Mapping) else None
        if isinstance(args, Mapping) and all(args.get(key) == setup.get(key) for key in SETUP):
            try:
                marker.unlink()
            except OSError as error:
                logger.warning(f"{marker}: could not clear the superseded pending marker ({error})")
                continue
            removed.append(marker)
            logger.info(f"{task}: cleared {marker}: run {folder.name} completed what it awaited")
    return removed
