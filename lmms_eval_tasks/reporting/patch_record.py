"""The host patches this process applied, found not needed or skipped (with why), for every report's
``provenance.host_patches``: ``host/patches.py`` records them as it applies each one."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

_lock = threading.Lock()
_record: dict[str, Any] | None = None


def set_patches(record: Mapping[str, Any] | None) -> None:
    """Keep what happened to the host patches so far (None: none was tried)."""
    global _record
    with _lock:
        _record = None if record is None else dict(record)


def patches() -> dict[str, Any] | None:
    """``{applied, not_needed, skipped, host_tested}``, or None when the launcher tried no patch (the pack
    used as a library)."""
    with _lock:
        return None if _record is None else dict(_record)
