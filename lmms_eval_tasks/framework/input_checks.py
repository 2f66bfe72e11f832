"""Shared checks of scorer options and saved records (one-line ``OptionError``, ``RecordError``) and the
JSON-lines reader; nothing from lmms-eval, so saved predictions can be re-scored anywhere."""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class RecordError(ValueError):
    """A saved record is unusable; the message names the record and the field."""

    def __init__(self, record_index: int | str, field: str, problem: str) -> None:
        self.record_index = record_index
        self.field = field
        self.problem = problem
        super().__init__(f"record {record_index}: field {field!r}: {problem}")


def require_field(record: dict[str, Any], field: str, index: int | str, kinds: type | tuple = object) -> Any:
    """Return ``record[field]`` or raise a RecordError naming the record and the field."""
    if not isinstance(record, dict):
        raise RecordError(index, field, f"record is a {type(record).__name__}, expected a JSON object")
    if field not in record:
        raise RecordError(index, field, "missing")
    value = record[field]
    if not isinstance(value, kinds):
        expected = kinds.__name__ if isinstance(kinds, type) else " or ".join(k.__name__ for k in kinds)
        raise RecordError(index, field, f"expected {expected}, got {type(value).__name__} {value!r:.80}")
    return value


class OptionError(ValueError):
    """A scorer option has the wrong type or value; the message is one line naming the option."""


_KIND_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def check_option(
    name: str,
    value: Any,
    kind: type | tuple[type, ...],
    *,
    choices: Iterable[Any] | None = None,
    minimum: float | None = None,
    maximum: float | None = None,
    allow_none: bool = False,
) -> Any:
    """Return ``value`` if it is a valid ``name`` option, else raise a one-line OptionError. A bool is never
    an int or a float (JSON ``true`` is not 1), an int is a float, NaN and infinities are no numbers."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    allowed = list(choices) if choices is not None else None
    if allowed is not None:
        wanted = "one of " + ", ".join(json.dumps(choice) for choice in allowed)
    else:
        wanted = " or ".join(_KIND_WORDS.get(each, each.__name__) for each in kinds)
        bounds = [f">= {minimum:g}"] if minimum is not None else []
        bounds += [f"<= {maximum:g}"] if maximum is not None else []
        wanted += (" " + " and ".join(bounds)) if bounds else ""
    if allow_none:
        wanted += " or null"
    if value is None and allow_none:
        return None
    scalar = isinstance(value, (str, int, float, bool, type(None)))
    shown = json.dumps(value) if scalar else type(value).__name__
    problem = OptionError(f"option {name}: expected {wanted}, got {shown:.80}")
    if isinstance(value, bool):
        ok_type = bool in kinds
    elif isinstance(value, int):
        ok_type = int in kinds or float in kinds
    elif isinstance(value, float):
        ok_type = float in kinds and math.isfinite(value)
    else:
        ok_type = isinstance(value, tuple(each for each in kinds if each not in (bool, int, float)))
    if not ok_type:
        raise problem
    if allowed is not None and not any(
        value == choice and type(value) is type(choice) or (isinstance(choice, float) and value == choice)
        for choice in allowed
    ):
        raise problem
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise problem
    return value


def check_judge_options(judge: Any, judge_model: Any) -> None:
    """One-line OptionError unless ``judge`` is a Judge object, null or a judge kind (any case, spaces
    trimmed) and ``judge_model`` a string or null: the judge options every judged scorer takes."""
    from lmms_eval_tasks.judges import KINDS
    from lmms_eval_tasks.judges.base import Judge

    if not isinstance(judge, Judge):
        kind = judge.strip().lower() if isinstance(judge, str) else judge
        check_option("judge", kind, str, choices=KINDS, allow_none=True)
    check_option("judge_model", judge_model, str, allow_none=True)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The objects of a UTF-8 JSON-lines file (BOM allowed, blank lines skipped); a bad line: RecordError."""
    return read_jsonl_numbered(path)[0]


def read_jsonl_numbered(path: str | Path) -> tuple[list[dict[str, Any]], list[int]]:
    """``read_jsonl`` plus each record's line number (1-based), for errors that name the line."""
    records: list[dict[str, Any]] = []
    numbers: list[int] = []
    if Path(path).is_dir():
        raise IsADirectoryError(f"{path} is a directory, not a JSON-lines file")
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            if line_number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise RecordError(
                    f"at line {line_number}",
                    "<encoding>",
                    f"not UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1}); "
                    "re-save the file as UTF-8",
                ) from None
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecordError(
                    f"at line {line_number}", "<json>", f"not valid JSON ({error.msg})"
                ) from None
            if not isinstance(value, dict):
                raise RecordError(f"at line {line_number}", "<json>", "expected a JSON object per line")
            records.append(value)
            numbers.append(line_number)
    return records, numbers
