"""Image corruptions: the pack's deterministic engine (profiles ``vrb``, ``vrb_official``, ``imagenet_c``:
``corrupt``), lazily in hooks (``CorruptionSpec``) or as a dataset copy (``materialize``)."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.corruptions.engine import (
    DEFAULT_MAX_PIXELS,
    MAX_PIXELS_ENV,
    MIN_SIDE,
    as_rgb_uint8,
    corrupt,
    corruption_names,
)
from lmms_eval_tasks.corruptions.tables import (
    CATEGORIES,
    IMAGENET_C_CORRUPTIONS,
    PROFILES,
    SEVERITY_INDEPENDENT,
    SEVERITY_TABLES,
    VRB_PAPER_CORRUPTIONS,
    severity_parameters,
)

ENGINE_VERSION = "3"
"""Bumped whenever an algorithm's output changes for the same inputs (part of every cache key and record)."""

_LAZY = dict.fromkeys(
    ("CorruptionSpec", "corrupt_visual", "image_seed", "materialize", "with_corruption"),
    "lmms_eval_tasks.corruptions.dataset",
) | {"contact_sheet": "lmms_eval_tasks.corruptions.sheet"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CATEGORIES",
    "DEFAULT_MAX_PIXELS",
    "ENGINE_VERSION",
    "IMAGENET_C_CORRUPTIONS",
    "MAX_PIXELS_ENV",
    "MIN_SIDE",
    "PROFILES",
    "SEVERITY_INDEPENDENT",
    "SEVERITY_TABLES",
    "VRB_PAPER_CORRUPTIONS",
    "CorruptionSpec",
    "as_rgb_uint8",
    "contact_sheet",
    "corrupt",
    "corrupt_visual",
    "corruption_names",
    "image_seed",
    "materialize",
    "severity_parameters",
    "with_corruption",
]
