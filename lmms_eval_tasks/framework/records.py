"""The record contract: each benchmark's ``RecordSchema`` and the one validator, ``validate_records``, run
before any scoring so every benchmark refuses bad input alike (one-line ``RecordError``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError

# kind -> words used in error messages
KINDS: dict[str, str] = {
    "str": "a string",
    "id": "a string or an integer id",
    "int": "an integer",
    "number": "a finite number",
    "scalar": "a string or a finite number",
    "bool": "true or false",
    "strings": "a string or a list of strings",
    "list": "a list",
    "object": "a JSON object",
    "any": "any JSON value",
}
_SHOWN = 60


@dataclass(frozen=True)
class RecordField:
    """One record field: kind (``KINDS``), required, nullable, allowed values (a tuple or ``"module:attr"``,
    compared after ``str()`` for ids), ``aliases`` (e.g. ``labeled_answer``) and a doc line."""

    name: str
    kind: str
    required: bool = True
    nullable: bool = False
    choices: tuple[Any, ...] | str | None = None
    aliases: tuple[str, ...] = ()
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"field {self.name!r}: unknown kind {self.kind!r}; known: {', '.join(KINDS)}")


@dataclass(frozen=True)
class RecordSchema:
    """A benchmark's records: ``fields``, ``identity`` (or a derived ``identity_key``), ``identity_note`` for
    duplicate errors and ``example``, a minimal valid record set (the contract tests start from it)."""

    fields: tuple[RecordField, ...]
    identity: tuple[str, ...]
    identity_key: str | None = None
    identity_note: str = ""
    example: tuple[dict[str, Any], ...] = ()
    _resolved: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        names = [spec.name for spec in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"record schema lists a field twice: {names}")
        unknown = [name for name in self.identity if name not in names]
        if unknown or not self.identity:
            raise ValueError(f"record schema identity {self.identity} names no declared field: {unknown}")

    def field(self, name: str) -> RecordField:
        """The declared field called ``name`` (KeyError when none is)."""
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def required_fields(self) -> tuple[RecordField, ...]:
        """The fields every record must carry."""
        return tuple(spec for spec in self.fields if spec.required)

    def _lazy(self, target: str) -> Any:
        value = self._resolved.get(target)
        if value is None:
            from lmms_eval_tasks.framework.targets import resolve

            value = resolve(target)
            self._resolved[target] = value
        return value

    def choices_of(self, spec: RecordField) -> tuple[Any, ...] | None:
        """The allowed values of ``spec`` (resolved when named as ``"module:attr"``)."""
        if spec.choices is None or isinstance(spec.choices, tuple):
            return spec.choices
        value = self._lazy(spec.choices)
        return tuple(value() if callable(value) else value)

    def identity_of(self, record: dict[str, Any]) -> tuple[Any, ...]:
        """The values that identify ``record`` (ids as strings, so 7 and "7" are the same question)."""
        if self.identity_key is not None:
            return tuple(self._lazy(self.identity_key)(record))
        return tuple(_identity_value(_get(record, self.field(name))) for name in self.identity)

    def identity_label(self, record: dict[str, Any]) -> str:
        """The identity as one string, ``"/"``-joined, absent optional parts left out (a VQDv1 record without
        ``row`` is keyed by its question id alone): the key ``compare`` pairs two runs' records by."""
        return "/".join(str(value) for value in self.identity_of(record) if value is not None)


def _identity_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | str):
        return str(value).strip()
    return repr(value)


def _get(record: dict[str, Any], spec: RecordField) -> Any:
    return next((record[name] for name in (spec.name, *spec.aliases) if name in record), None)


def shown_value(value: Any) -> str:
    """``value`` as an error message shows it: JSON words, sizes of containers and bytes, short reprs."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _non_finite(value: Any) -> bool:
    """True when a NaN or an infinity sits anywhere in ``value`` (searched 20 deep; no call per value)."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif depth <= 20 and isinstance(item, list | dict):
            pending += [(inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item)]
    return False


# The kinds checked by type alone (a bool is never an id or an int): no call per value.
_TYPES: dict[str, Any] = {"str": str, "bool": bool, "list": list, "object": dict, "id": str | int, "int": int}


def _kind_ok(kind: str, value: Any) -> bool:
    """The kinds ``_TYPES`` does not cover: finite numbers, scalars, strings (or lists of them), any."""
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "scalar":
        return isinstance(value, str) or (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        )
    if kind == "strings":
        return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    return kind == "any"


def check_record(
    schema: RecordSchema, record: Any, index: int | str, choices: Sequence[Any] | None = None
) -> None:
    """RecordError unless ``record`` is a JSON object matching ``schema`` (``choices``: ``choices_of``)."""
    if not isinstance(record, dict):
        raise RecordError(index, "<record>", f"expected a JSON object, got {type(record).__name__}")
    if choices is None:
        choices = [schema.choices_of(spec) for spec in schema.fields]
    for spec, allowed in zip(schema.fields, choices, strict=True):
        name = spec.name if spec.name in record else next((a for a in spec.aliases if a in record), None)
        if name is None:
            if spec.required:
                also = f" (or {' / '.join(spec.aliases)})" if spec.aliases else ""
                raise RecordError(index, spec.name, f"missing{also}; {_field_words(spec)}")
            continue
        value = record[name]
        if value is None:
            if spec.nullable:
                continue
            raise RecordError(index, name, f"null; {_field_words(spec)}")
        simple = _TYPES.get(spec.kind)
        if simple is not None:
            kind_ok = isinstance(value, simple) and (spec.kind == "bool" or not isinstance(value, bool))
        else:
            kind_ok = _kind_ok(spec.kind, value)
        if not kind_ok:
            raise RecordError(index, name, f"{_field_words(spec)}, got {shown_value(value)}")
        if spec.kind in ("list", "object") and _non_finite(value):
            raise RecordError(index, name, "holds NaN or Infinity; expected finite numbers")
        if allowed is not None:
            compared = str(value).strip() if spec.kind == "id" else value
            if compared not in allowed:
                known = ", ".join(str(choice) for choice in allowed)
                raise RecordError(index, name, f"unknown value {shown_value(value)}; known: {known}")


def _field_words(spec: RecordField) -> str:
    words = f"expected {KINDS[spec.kind]}"
    return words + " or null" if spec.nullable else words


def validate_records(
    schema: RecordSchema,
    records: Sequence[Any],
    *,
    lines: Sequence[int] | None = None,
    label: Callable[[int], str] | None = None,
) -> None:
    """Check every record against ``schema`` and refuse a second record with the same identity ("duplicate"
    when equal, "conflicting" when not); ``lines`` (each record's file line) or ``label`` name records."""
    if label is None:
        label = (lambda i: f"{i} (line {lines[i]})") if lines is not None else (lambda i: i)  # type: ignore[assignment]
    if not records:
        raise RecordError("-", "<records>", "no records to score")
    seen: dict[tuple[Any, ...], int] = {}
    # An optional identity field (VQDv1's row) is on every record or on none, else one question can enter
    # twice under two keys; a derived identity (``identity_key``: DARE's option) decides that itself.
    optional = (
        []
        if schema.identity_key
        else [schema.field(n) for n in schema.identity if not schema.field(n).required]
    )
    given: dict[tuple[str, bool], int] = {}  # (optional identity field, present) -> first record
    note = f"; {schema.identity_note}" if schema.identity_note else ""
    choices = [schema.choices_of(spec) for spec in schema.fields]
    for index, record in enumerate(records):
        check_record(schema, record, label(index), choices)
        for spec in optional:
            present = _get(record, spec) is not None
            first_other = given.get((spec.name, not present))
            given.setdefault((spec.name, present), index)
            if first_other is not None:
                has, lacks = (index, first_other) if present else (first_other, index)
                raise RecordError(
                    label(lacks),
                    spec.name,
                    f"missing, while record {label(has)} has it: an identity field is given on every record "
                    f"or on none{note}",
                )
        identity = schema.identity_of(record)
        first = seen.setdefault(identity, index)
        if first == index:
            continue
        kind = "duplicate" if _same(records[first], record) else "conflicting"
        pairs = zip(schema.identity, identity, strict=True)
        shown = ", ".join(f"{name}={shown_value(value)}" for name, value in pairs)
        raise RecordError(
            label(index),
            schema.identity[0],
            f"{kind} record ({shown}); also record {label(first)}: each record may appear once{note}",
        )


def _same(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Equal records, ignoring where they came from (task, variant) as the harness adds them."""
    ignored = ("task", "variant")
    return {k: v for k, v in first.items() if k not in ignored} == {
        k: v for k, v in second.items() if k not in ignored
    }
