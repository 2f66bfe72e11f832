"""Every registered parser of model output survives hostile and generated text, in linear time.

Correctness here is "no exception, the declared result type"; the time budget (2 s per 100 kB, plus a
floor) is only a guard against quadratic regressions and never flakes on a loaded machine. The real
performance target (50 ms per 100 kB) is measured by benchmarks/parser_worst_case.py.
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmms_eval_tasks.framework.parser_index import (
    PARSERS,
    ParserEntry,
    call_parser,
    hostile_corpus,
    text_bytes,
)

BUDGET_SECONDS_PER_100KB = 2.0
BUDGET_FLOOR_SECONDS = 0.25
CORPUS_BYTES = 30_000

_FRAGMENTS = [
    "A", "B", "C", "D", "E", "a", "b", " ", "  ", "\n", "\t", "(", ")", "[", "]", "{", "}", ",", ".", ":",
    ";", "'", '"', "*", "**", "`", "```", "#", "-", "and", "or", "answer", "Answer:", "the answer is",
    "correct option", "NONE", "none of the above", "yes", "no", "is", "?", "1", "2.5", "-3", "1,000",
    "twenty-one", '{"answer": ', '["A", "B"]', "answer,A", "é", "\u00a0", "\U0001f600", "\u0663", "\x00",
]  # fmt: skip
_HOSTILE_TEXT = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(_FRAGMENTS), max_size=120).map("".join),
    st.tuples(st.sampled_from(_FRAGMENTS), st.integers(1, 3000)).map(lambda pair: pair[0] * pair[1]),
)


_BY_NAME = {entry.name: entry for entry in PARSERS}


@functools.cache
def _warmed(name: str) -> Callable[[str], Any]:
    parser = _BY_NAME[name].load()
    call_parser(parser, "warm up: A")
    return parser


def _warm(entry: ParserEntry) -> Callable[[str], Any]:
    """The parser, called once first: lazy imports and data (WordNet) load outside the time budget."""
    return _warmed(entry.name)


def _budget(text: str) -> float:
    return BUDGET_FLOOR_SECONDS + BUDGET_SECONDS_PER_100KB * text_bytes(text) / 100_000


def _check(entry: ParserEntry, parser, text: str) -> None:
    # this thread's CPU time, not wall time: a catastrophic backtrack burns CPU; a loaded machine only waits.
    # The garbage collector paused: a full collection of the worker's heap (0.77 s once in CI, for a 1 ms
    # parse) is no part of the parser's cost.
    gc.disable()
    try:
        start = time.thread_time()
        result = call_parser(parser, text)
        elapsed = time.thread_time() - start
    finally:
        gc.enable()
    assert type(result).__name__ in entry.returns, (entry.name, repr(text[:60]), type(result).__name__)
    assert elapsed < _budget(text), f"{entry.name}: {elapsed:.2f} s on {len(text)} chars {text[:40]!r}"


def test_every_parser_is_registered_once_and_loads() -> None:
    names = [entry.name for entry in PARSERS]
    assert len(names) == len(set(names))
    for entry in PARSERS:
        assert callable(entry.load()), entry.name


@pytest.mark.parametrize("entry", PARSERS, ids=lambda entry: entry.name)
def test_parser_survives_the_hostile_corpus_in_linear_time(entry: ParserEntry) -> None:
    parser = _warm(entry)
    for _, text in hostile_corpus(CORPUS_BYTES):
        _check(entry, parser, text)


@pytest.mark.parametrize("entry", PARSERS, ids=lambda entry: entry.name)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_HOSTILE_TEXT)
def test_parser_survives_generated_text(entry: ParserEntry, text: str) -> None:
    _check(entry, _warm(entry), text)


def test_the_reported_hostile_cases_are_fast_and_right() -> None:
    """The two cases of the issue: the DARE list run and the rule judge's whitespace run."""
    from lmms_eval_tasks.judges.rules import extract_option_letter
    from lmms_eval_tasks.tasks.dare.scoring import parse_generated

    text = "x " + "A\nB\n" * 4000
    start = time.thread_time()
    assert parse_generated(text).letters == frozenset("AB")
    assert extract_option_letter("answer" + " " * 1600 + "!") is None
    assert extract_option_letter("The answer is" + " " * 1600 + "(C)") == "C"
    assert time.thread_time() - start < 1.0


def test_huge_numbers_are_exact_not_rounded_or_refused() -> None:
    from lmms_eval_tasks.judges.rules import extract_number

    assert extract_number("9" * 5000) == "9" * 5000  # was: ValueError (int-to-str digit limit)
    assert extract_number("0." + "5" * 40) == "0." + "5" * 40  # was: rounded to 28 digits
    assert extract_number("-007.50 apples") == "-7.5"
    assert extract_number("\u0663.\u0665") == "3.5"  # Arabic-Indic digits, as Decimal read them
