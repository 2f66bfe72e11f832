"""TDIUC's config: the protocol (``LMMS_EVAL_TASKS_TDIUC_PROTOCOL``) and the WordNet its scoring needs."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.tasks.revisiting import shared_tasks


def score_options(task: str = "tdiuc") -> dict[str, Any]:
    """The ``score`` options of a tdiuc task: ``{"protocol": ...}`` when the environment sets one."""
    return dict(shared_tasks.protocol_option("tdiuc"))


def wordnet_problem() -> str | None:
    """None when WordNet (TDIUC's synonym matching) is ready, found or installed now; else the one-line fix.
    The launcher runs it before any TDIUC task (the registry entry's ``launch_check``)."""
    from lmms_eval_tasks.wordnet import WordNetMissing, ensure_wordnet

    try:
        ensure_wordnet()
    except WordNetMissing as error:
        return f"lmms_eval: TDIUC scoring needs WordNet (synonym matching): {error}"
    return None
