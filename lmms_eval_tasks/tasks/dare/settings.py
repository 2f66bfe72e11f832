"""DARE's settings: no environment variable, so every task and group scores with the defaults (``{}``)."""

from __future__ import annotations

from typing import Any


def score_options(task: str = "dare") -> dict[str, Any]:
    """The ``score_task`` options of a DARE task or group: none (primary format gen, population std)."""
    if not task.startswith("dare"):
        raise ValueError(f"{task!r} is not a DARE task or group (DARE's names start with 'dare')")
    return {}
