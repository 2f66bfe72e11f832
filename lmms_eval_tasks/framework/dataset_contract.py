"""The dataset contract: the row fields a benchmark's hooks read (``RowSchema``), checked when a task's docs
are prepared, before any model runs; a bad row is refused in one line, never skipped."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks.framework.records import KINDS, shown_value

# kind -> words used in error messages: the record kinds but objects, non-empty text and lists, images
ROW_KINDS: dict[str, str] = {
    **{kind: words for kind, words in KINDS.items() if kind != "object"},
    "text": "non-empty text",
    "list": "a non-empty list",
    "image": "an image (bytes or a path)",
}
_BATCH = 2048
STAND_IN_COLUMN = "pack_stand_in"  # taskgen.stand_in_parquet: a one-row placeholder, not the data


class RowError(ValueError):
    """A dataset row (or column) breaks its benchmark's dataset contract; the message is one line."""


@dataclass(frozen=True)
class RowField:
    """One column the hooks read: its ``kind`` (``ROW_KINDS``), whether null is allowed (or only where column
    ``null_when[0]`` holds one of ``null_when[1]``), the tasks reading it (``needed_by``: task -> bool)."""

    name: str
    kind: str
    nullable: bool = False
    null_when: tuple[str, tuple[str, ...]] | None = None
    needed_by: str | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ROW_KINDS:
            raise ValueError(
                f"row field {self.name!r}: unknown kind {self.kind!r}; known: {', '.join(ROW_KINDS)}"
            )


@dataclass(frozen=True)
class ScoringUnit:
    """Rows a metric needs together (HallusionBench's figure set, DARE's four options), keyed by the columns
    ``key``; ``why`` says which metrics need it whole (``framework.cuts`` rounds a ``--limit`` to units)."""

    name: str
    key: tuple[str, ...]
    needed_by: str | None = None
    why: str = ""


@dataclass(frozen=True)
class RowSchema:
    """A benchmark's dataset rows: ``fields``, the ``identity`` columns (errors), whether images get EXIF
    orientation as the official loader does (``image_note``) and the ``units`` a ``--limit`` is rounded to."""

    fields: tuple[RowField, ...]
    identity: tuple[str, ...]
    exif_transpose: bool = False
    image_note: str = ""
    units: tuple[ScoringUnit, ...] = ()

    def __post_init__(self) -> None:
        names = [spec.name for spec in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"row schema lists a field twice: {names}")

    def fields_for(self, task: str) -> tuple[RowField, ...]:
        """The fields ``task`` reads (``needed_by`` resolved)."""
        from lmms_eval_tasks.framework.targets import resolve

        return tuple(spec for spec in self.fields if spec.needed_by is None or resolve(spec.needed_by)(task))

    def unit_for(self, task: str) -> ScoringUnit | None:
        """The scoring unit of ``task`` (the first whose ``needed_by`` accepts it), or None."""
        from lmms_eval_tasks.framework.targets import resolve

        return next(
            (unit for unit in self.units if unit.needed_by is None or resolve(unit.needed_by)(task)), None
        )


def _column_kind_ok(kind: str, arrow_type: Any) -> bool:
    """True when an Arrow column of ``arrow_type`` can hold ``kind`` (null-typed: checked per row)."""
    import pyarrow as pa

    types = pa.types
    if types.is_null(arrow_type) or kind == "any":
        return True
    text = types.is_string(arrow_type) or types.is_large_string(arrow_type)
    integer = types.is_integer(arrow_type)
    number = integer or types.is_floating(arrow_type) or types.is_decimal(arrow_type)
    listed = (
        types.is_list(arrow_type) or types.is_large_list(arrow_type) or types.is_fixed_size_list(arrow_type)
    )
    items = arrow_type.value_type if listed else None
    if types.is_struct(arrow_type):
        image = bool({arrow_type.field(i).name for i in range(arrow_type.num_fields)} & {"bytes", "path"})
    else:
        image = types.is_binary(arrow_type) or types.is_large_binary(arrow_type) or text
    return {
        "text": text,
        "str": text,
        "id": text or integer,
        "int": integer,
        "number": number,
        "scalar": text or number,
        "bool": types.is_boolean(arrow_type),
        "strings": text or (listed and (types.is_string(items) or types.is_large_string(items))),
        "list": listed,
        "image": image,
    }.get(kind, False)


def _bad_mask(kind: str, column: Any) -> Any:
    """A boolean Arrow mask of non-null values breaking ``kind`` (NaN, empty text or list, no image data)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrow_type = column.type
    if kind == "text":
        return pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(column)), 0), False)
    if kind in ("number", "scalar") and pa.types.is_floating(arrow_type):
        return pc.fill_null(pc.invert(pc.is_finite(column)), False)
    if kind == "list" and not pa.types.is_null(arrow_type):
        return pc.fill_null(pc.equal(pc.list_value_length(column), 0), False)
    if kind == "image" and pa.types.is_struct(arrow_type):
        parts = [
            pc.is_null(pc.struct_field(column, name))
            for name in ("bytes", "path")
            if arrow_type.get_field_index(name) >= 0
        ]
        empty = functools.reduce(pc.and_, parts)
        return pc.and_(pc.invert(pc.is_null(column)), pc.fill_null(empty, False))
    return pa.array([False] * len(column))


def _label(batch: Any, index: int, identity: Sequence[str], position: int) -> str:
    """``row <identity values joined by '/'> (row <position>)``, or ``row <position>``."""
    values = [
        str(batch.column(name)[index].as_py())
        for name in identity
        if name in batch.column_names and batch.column(name)[index].is_valid
    ]
    return f"row {'/'.join(values)} (row {position})" if values else f"row {position}"


def check_rows(schema: RowSchema, dataset: Any, task: str) -> None:
    """Raise ``RowError`` (one line) unless every row holds what ``task``'s hooks read: the column, a value
    (null where allowed) of its kind, non-empty text; images are checked for presence, not decoded."""
    fields = schema.fields_for(task)
    columns = set(dataset.column_names)
    missing = [spec.name for spec in fields if spec.name not in columns]
    if missing:
        raise RowError(
            f"{task}: the dataset has no column {', '.join(map(repr, missing))} (its hooks read it; "
            f"columns: {', '.join(sorted(columns))}); fix: point the task at a complete copy of the dataset"
        )
    needed = list(
        dict.fromkeys(
            [spec.name for spec in fields]
            + [name for name in schema.identity if name in columns]
            + [spec.null_when[0] for spec in fields if spec.null_when and spec.null_when[0] in columns]
        )
    )
    import pyarrow as pa
    import pyarrow.compute as pc

    selected = dataset.select_columns(needed).with_format("arrow")
    position = 0
    for batch in selected.iter(batch_size=_BATCH):
        for spec in fields:
            column = batch.column(spec.name)
            if not _column_kind_ok(spec.kind, column.type):
                first = next((i for i in range(len(column)) if column[i].is_valid), 0)
                value = column[first].as_py() if len(column) else None
                where = _label(batch, first, schema.identity, position + first)
                raise RowError(
                    f"{task}: {where}: field {spec.name!r}: expected {ROW_KINDS[spec.kind]}, "
                    f"got {shown_value(value)} (the column holds {column.type})"
                )
            nulls = pc.is_null(column)
            if spec.nullable:
                nulls = pc.and_(nulls, pa.scalar(False))
            elif spec.null_when is not None:
                other, values = spec.null_when
                value_set = pa.array([str(value) for value in values], type=pa.string())
                allowed = pc.fill_null(
                    pc.is_in(pc.cast(batch.column(other), "string"), value_set=value_set), False
                )
                nulls = pc.and_(nulls, pc.invert(allowed))
            bad = pc.or_(nulls, _bad_mask(spec.kind, column))
            if pc.any(bad).as_py():
                index = pc.index(bad, True).as_py()
                value = column[index].as_py()
                where = _label(batch, index, schema.identity, position + index)
                problem = "null" if value is None else f"got {shown_value(value)}"
                if spec.kind == "text" and isinstance(value, str):
                    problem = "empty"
                raise RowError(
                    f"{task}: {where}: field {spec.name!r}: {problem}; expected {ROW_KINDS[spec.kind]}"
                )
        position += batch.num_rows


def checked_rows(benchmark: str, dataset: Any, task: str) -> Any:
    """``dataset`` checked against the row schema (``check_rows``), image columns left undecoded:
    ``images.load_rgb`` decodes each, naming the row (``datasets`` would raise ``UnidentifiedImageError``)."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    schema = get_benchmark(benchmark).row_schema
    if schema is None or STAND_IN_COLUMN in dataset.column_names:
        return dataset
    check_rows(schema, dataset, task)
    features = getattr(dataset, "features", None) or {}
    for spec in schema.fields_for(task):
        feature = features.get(spec.name)
        if spec.kind == "image" and type(feature).__name__ == "Image" and getattr(feature, "decode", False):
            from datasets import Image

            dataset = dataset.cast_column(spec.name, Image(decode=False))
    return dataset


def image_of(benchmark: str, doc: Any, field: str, row: str | int) -> Any:
    """The image in ``doc[field]`` as RGB, loaded the benchmark's way (``RowSchema.exif_transpose``)."""
    from lmms_eval_tasks.framework.images import load_rgb
    from lmms_eval_tasks.framework.registry import get_benchmark

    schema = get_benchmark(benchmark).row_schema
    exif = bool(schema is not None and schema.exif_transpose)
    return load_rgb(doc.get(field), row, field, exif_transpose=exif)
