"""The answers ``random_guess`` may give for a task: the benchmark's ``Behaviour.random_answer(task, doc,
rng)`` (every choice drawn from ``rng``), else ``fallback_answer``."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable
from typing import Any

from loguru import logger

RandomAnswer = Callable[[str, dict, random.Random], str]


_lock = threading.Lock()
_resolved: dict[str, RandomAnswer | None] = {}  # benchmark name -> its random_answer

# "A. text", "(B) text", "C) text", "D: text" at the start of a line.
_OPTION_LINE = re.compile(r"^[ \t]*\(?([A-Z])(?:\)|\.|:)[ \t]+\S", re.MULTILINE)
_YES_NO_HINT = re.compile(r"\byes\b[^\n]{0,20}\bno\b|\bno\b[^\n]{0,20}\byes\b", re.IGNORECASE)
# A line holding an auxiliary verb at a sentence start with a "?" after it. The first such verb of a line
# decides (a "?" after a later one is after the first one too), so the atomic group never retries later
# verbs, and the text between sentence marks is skipped by possessive runs: linear, with a small constant.
_AUXILIARY = (
    r"(?:is|are|was|were|am|do|does|did|can|could|will|would|should|shall|has|have|had|may|might|must)\b"
)
_AUXILIARY_QUESTION = re.compile(
    rf"^(?>(?:\A|(?<=\n)[^\S\n]*+){_AUXILIARY}"
    rf"|(?:[^\n.?!:]*+[.?!:][^\S\n]*+(?!{_AUXILIARY}))*+[^\n.?!:]*+[.?!:][^\S\n]*+{_AUXILIARY})"
    r"[^\n?]*+\?",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")
_PLACEHOLDERS = re.compile(r"<(?:image|video|audio)>")


def _load(benchmark: Any) -> RandomAnswer | None:
    """The benchmark's ``Behaviour.random_answer``; None (with a warning) when its behaviour module does not
    exist (a module it imports that is missing is a real bug: raised)."""
    try:
        return benchmark.loaded.random_answer
    except ModuleNotFoundError as error:
        module_name, missing = str(benchmark.behaviour), error.name or ""
        if not (module_name == missing or module_name.startswith(missing + ".")):
            raise
        logger.warning(f"random_guess: behaviour module {module_name} not found; using the fallback")
        return None


def answer_function(task_name: str) -> RandomAnswer | None:
    """The ``random_answer`` of the benchmark owning ``task_name`` (longest prefix), or None (fallback)."""
    from lmms_eval_tasks.framework.registry import benchmark_for_task

    benchmark = benchmark_for_task(task_name)
    if benchmark is None:
        return None
    with _lock:
        if benchmark.name not in _resolved:
            _resolved[benchmark.name] = _load(benchmark)
        return _resolved[benchmark.name]


def listed_option_letters(prompt: str) -> list[str]:
    """Option letters listed one per line in ``prompt`` ("A. ...", "(B) ...", "C) ..."), in order, unique."""
    letters = list(dict.fromkeys(_OPTION_LINE.findall(prompt)))
    # A real option list starts at A and has at least two entries; "I. think" alone is not one.
    return letters if len(letters) >= 2 and "A" in letters else []


def looks_like_yes_no(prompt: str) -> bool:
    """True when the prompt names both yes and no, or asks a question opening with an auxiliary verb."""
    if _YES_NO_HINT.search(prompt):
        return True
    return "?" in prompt and _AUXILIARY_QUESTION.search(prompt) is not None


def fallback_answer(prompt: str, rng: random.Random) -> str:
    """Generic answer space: a listed option letter, else Yes/No for yes/no questions, else a prompt word."""
    letters = listed_option_letters(prompt)
    if letters:
        return rng.choice(letters)
    if looks_like_yes_no(prompt):
        return rng.choice(["Yes", "No"])
    words = _WORD.findall(_PLACEHOLDERS.sub(" ", prompt))
    return rng.choice(words) if words else ""
