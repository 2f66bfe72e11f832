"""Harness-free scoring: parse saved model outputs and compute each benchmark's metrics.

Every benchmark module exposes ``score_records(records, **options) -> dict[str, float | int]``; the
benchmark registry (``lmms_eval_tasks.registry``) names it for ``lmms-eval-tasks score <benchmark>``.
The modules import nothing from lmms-eval, so saved predictions can be re-scored anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
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


def get_scorer(benchmark: str) -> Callable[..., dict[str, Any]]:
    """Return the ``score_records`` function for ``benchmark`` or raise KeyError listing the known ones."""
    from lmms_eval_tasks.registry import get_benchmark, resolve

    return resolve(get_benchmark(benchmark).scorer)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file; blank lines are skipped, a malformed line raises RecordError."""
    records: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
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
    return records


def iter_indexed(records: Iterable[dict[str, Any]]) -> Iterable[tuple[int, dict[str, Any]]]:
    """Enumerate records from 0, the index used in RecordError messages."""
    return enumerate(records)
