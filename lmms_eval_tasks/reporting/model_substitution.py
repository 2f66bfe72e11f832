"""The model substitution this process made (`--model llava` served by the pack's LLaVA, docs/models.md),
recorded with its deviation line in every report's provenance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

USED_CLASS = "lmms_eval_tasks.models.llava_transformers.LlavaTransformers"

_active: dict[str, Any] | None = None


def set_active(record: Mapping[str, Any] | None) -> None:
    """Remember the substitution (``asked``, ``used``, ``checkpoint``, ``asked_checkpoint``), or forget it."""
    global _active
    _active = None if record is None else dict(record)


def active() -> dict[str, Any] | None:
    """The substitution this process made (``asked``, ``used``, ``checkpoint``, ...), or None."""
    return None if _active is None else dict(_active)


def record_checkpoint(asked_checkpoint: str, checkpoint: str) -> None:
    """Called by the pack's model when built under a substitution: the checkpoint actually loaded."""
    if _active is not None:
        _active.update(asked_checkpoint=asked_checkpoint, checkpoint=checkpoint)


def deviation(record: Mapping[str, Any]) -> str:
    """The provenance deviation line for a substitution record."""
    return (
        f"--model {record['asked']} was served by {record['used']} ({USED_CLASS}) on checkpoint "
        f"{record.get('checkpoint')}: the original LLaVA code did not import; image preprocessing and "
        f"tokenization differ slightly from the original (models.md in the pack's documentation)"
    )
