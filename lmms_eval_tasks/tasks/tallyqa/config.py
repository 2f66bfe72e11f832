"""TALLYQA's scoring options, one function: the protocol (``LMMS_EVAL_TASKS_TALLYQA_PROTOCOL``)."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.tasks.revisiting import shared_tasks


def score_options(task: str = "tallyqa") -> dict[str, Any]:
    """The ``score`` options of a tallyqa task: ``{"protocol": ...}`` when the environment sets one."""
    return dict(shared_tasks.protocol_option("tallyqa"))
