"""Shared text rules of the "Revisiting MLLM Evaluation" datasets (TDIUC, TallyQA, DVQA): the authors'
scripts spell digit strings out with ``num2words``, which ``cardinal_words`` reproduces exactly."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, check_option, require_field
from lmms_eval_tasks.framework.registry import scorer

PROTOCOLS = ("default", "official")
BUCKETS = ("0", "1", "2", "3", "4+")  # of TallyQA's true counts and VQDv1's box counts (4 and more: one)

_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = (
    (10**12, "trillion"),
    (10**9, "billion"),
    (10**6, "million"),
    (10**3, "thousand"),
)
CARDINAL_LIMIT = 10**15  # num2words spells larger numbers too; answers this large do not occur
_ASCII_DIGITS = re.compile(r"[0-9]+")
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_TEN_POWER = re.compile(f"10([{_SUPERSCRIPTS}]+)")


@dataclass(frozen=True)
class ProtocolOptions:
    """The scorer option of TDIUC, TallyQA and DVQA, checked here: ``protocol``, "default" or "official"
    (the authors' script, bugs included)."""

    protocol: str = "default"

    def __post_init__(self) -> None:
        check_option("protocol", self.protocol, str, choices=PROTOCOLS)


def judged_records(
    records: Iterable[dict[str, Any]], protocol: str, judge: Callable[[list[dict[str, Any]], str], list[Any]]
) -> tuple[list[dict[str, Any]], list[Any]]:
    """The opening of every dataset's ``score`` (``protocol`` checked by ``ProtocolOptions``): the
    records as a list (RecordError when there are none) and the dataset's ``judge(records, protocol)``."""
    records = list(records)
    if not records:
        raise RecordError("-", "<records>", "no records to score")
    return records, judge(records, protocol)


def per_question_correct_for(
    judge: Callable[[list[dict[str, Any]], str], list[Any]],
    benchmark: str,
    correct: Callable[[Any], bool],
) -> Any:
    """A dataset's ``per_question_correct(records, **options)`` (a ``@scorer``) for ``compare``, from its
    ``judge``, how to read a judgement's correctness, and the ``benchmark`` whose record identity keys it."""

    def per_question_correct(
        records: Sequence[dict[str, Any]], options: ProtocolOptions
    ) -> dict[str, bool | None]:
        """``{record identity: correct}`` for ``lmms-eval-tasks compare``."""
        from lmms_eval_tasks.framework.comparison import correctness_by_id
        from lmms_eval_tasks.framework.registry import schema_of

        records = list(records)
        judged = judge(records, options.protocol)
        schema = schema_of(benchmark)
        keys = [schema.identity_label(record) for record in records]
        return correctness_by_id(keys, [correct(item) for item in judged], id_field=schema.identity[0])

    return scorer(ProtocolOptions)(per_question_correct)


def count_bucket(count: int) -> str:
    """The bucket of a count (TallyQA's true count, VQDv1's ground-truth boxes): "0" .. "3" or "4+"."""
    return str(count) if count < 4 else "4+"


def cardinal_words(number: int) -> str:
    """English cardinal of a non-negative integer exactly as ``num2words(number)`` (lang "en") spells it."""
    if number < 0 or number >= CARDINAL_LIMIT:
        raise ValueError(f"cardinal_words covers 0 .. {CARDINAL_LIMIT - 1}, got {number}")
    if number < 20:
        return _SMALL[number]
    if number < 100:
        tens, ones = divmod(number, 10)
        return _TENS[tens] + (f"-{_SMALL[ones]}" if ones else "")
    if number < 1000:
        hundreds, rest = divmod(number, 100)
        head = f"{_SMALL[hundreds]} hundred"
        return f"{head} and {cardinal_words(rest)}" if rest else head
    for scale, name in _SCALES:
        if number >= scale:
            count, rest = divmod(number, scale)
            head = f"{cardinal_words(count)} {name}"
            if not rest:
                return head
            # num2words joins a remainder below 100 with "and", a larger one with ", "
            return f"{head} and {cardinal_words(rest)}" if rest < 100 else f"{head}, {cardinal_words(rest)}"
    raise AssertionError("unreachable")


_MAX_CARDINAL_DIGITS = len(str(CARDINAL_LIMIT))  # longer digit strings are never converted (linear time)


def digits_to_words(text: str) -> str:
    """``text`` spelled out when an ASCII digit string (num2words), else unchanged; more digits than
    ``CARDINAL_LIMIT`` has are left as they are (the official scripts fail; quadratic time)."""
    if len(text) <= _MAX_CARDINAL_DIGITS and _ASCII_DIGITS.fullmatch(text):
        value = int(text)
        if value < CARDINAL_LIMIT:
            return cardinal_words(value)
    return text


def official_digits_to_words(text: str, powers_of_ten: bool = False) -> str:
    """The official rule: ``str.isdigit()`` strings through num2words ("３" -> "three"; ``powers_of_ten``:
    DVQA's "10²" is "one hundred"); other superscripts, where the script crashes, left as they are."""
    if not text.isdigit():
        return text
    if text.isdecimal():
        if len(text) <= _MAX_CARDINAL_DIGITS and int(text) < CARDINAL_LIMIT:
            return cardinal_words(int(text))
        return text
    power = _TEN_POWER.fullmatch(text) if powers_of_ten and len(text) <= 6 else None
    if power:
        exponent = int("".join(str(_SUPERSCRIPTS.index(char)) for char in power.group(1)))
        if 10**exponent < CARDINAL_LIMIT:
            return cardinal_words(10**exponent)
    return text


def empty_predictions(records: Iterable[dict[str, Any]]) -> int:
    """How many records have an empty (or blank) prediction."""
    return sum(1 for record in records if not str(record.get("prediction") or "").strip())


def closing_counts(
    metrics: dict[str, Any], records: list[dict[str, Any]], judged: list[Any], protocol: str, **counts: int
) -> dict[str, Any]:
    """``metrics`` completed with the question count, ``counts``, the empty predictions and the protocol."""
    metrics["questions"] = len(judged)
    metrics.update(counts)
    metrics["empty_predictions"] = empty_predictions(records)
    metrics["protocol"] = protocol
    return metrics


def prediction_text(record: dict[str, Any], index: int | str) -> str:
    """The record's ``prediction``, surrounding whitespace stripped (as the authors' inference code does
    before writing its answer files); None -> ""; RecordError when missing or not a string."""
    value = require_field(record, "prediction", index, (str, type(None)))
    return "" if value is None else value.strip()


def choice_field(
    record: dict[str, Any], name: str, index: int | str, known: tuple[str, ...], what: str
) -> str:
    """The record's ``name``, one of ``known`` (else a RecordError naming the record, field and choices)."""
    value = require_field(record, name, index, str)
    if value not in known:
        raise RecordError(index, name, f"unknown {what} {value!r}; known: {known}")
    return value
