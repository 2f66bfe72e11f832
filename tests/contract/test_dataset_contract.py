"""The dataset contract, checked against EVERY registered benchmark through its tasks' ``process_docs``: a
benchmark added later gets these checks from its ``RowSchema`` without writing them.

Each benchmark's bundled sample task is the valid starting point (real ``datasets`` parquet files, the
task's own ``process_docs``); every case breaks one column a hook reads and expects one line naming the task
and the column (a missing column) or the row's identity and the field (a null, wrong-typed or empty value),
raised when the docs are prepared, before any model runs.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework import task_index
from lmms_eval_tasks.framework.registry import benchmarks

BENCHMARKS = sorted(benchmarks())
# A value of another kind for each declared kind (the whole column is replaced: Arrow columns are typed).
WRONG: dict[str, Any] = {
    "text": 7,
    "str": 7,
    "id": ["x"],
    "int": "seven",
    "number": "seven",
    "scalar": ["x"],
    "bool": "yes",
    "strings": 7,
    "list": 7,
    "image": 7,
}


@cache
def _sample_task(name: str) -> tuple[str, Path]:
    """(task, parquet file) of the benchmark's bundled-sample task on one parquet file whose hooks read the
    most columns (DARE: a single_var task, which also reads ``instance_id``)."""
    benchmark = benchmarks()[name]
    found: list[tuple[int, str, Path]] = []
    for entry in task_index.pack_tasks():
        if entry.kind != "task" or "_sample" not in entry.name or not benchmark.owns_task(entry.name):
            continue
        config = task_index.task_config(entry)
        files = (config.get("dataset_kwargs") or {}).get("data_files")
        split = config.get("test_split") or config.get("validation_split") or "train"
        if config.get("dataset_path") != "parquet" or not files:
            continue
        relative = files if isinstance(files, str) else files.get(split)
        if isinstance(relative, str):
            # relative to the YAML file that names it: the task's own or its template's (one folder up)
            folders = ((TASKS_DIR / entry.path).parent, (TASKS_DIR / entry.path).parent.parent)
            path = next((folder / relative for folder in folders if (folder / relative).is_file()), None)
            assert path is not None, f"{entry.name}: {relative} not found"
            read = len(benchmark.row_schema.fields_for(entry.name))
            found.append((-read, entry.name, path))
    assert found, f"{name}: no bundled sample task on one parquet file"
    _, task, path = min(found)
    return task, path


def _dataset(name: str) -> tuple[str, Any]:
    from datasets import load_dataset

    task, path = _sample_task(name)
    return task, load_dataset("parquet", data_files=str(path), split="train")


def _process_docs(name: str, task: str):
    from lmms_eval_tasks.framework.task_pipeline import benchmark_hooks

    return benchmark_hooks(name).process_docs_for(task)


def _replaced(dataset: Any, column: str, values: list[Any]) -> Any:
    """``dataset`` with ``column`` replaced by ``values`` (its declared feature kept when the type is)."""
    import pyarrow as pa
    from datasets import Dataset, DatasetInfo, Features

    table = dataset.data.table
    index = table.schema.get_field_index(column)
    old_type = table.schema.field(index).type
    try:
        array = pa.array(values, type=old_type)
        features = dataset.features
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        array = pa.array(values)
        features = Features({**dataset.features})
        features[column] = Features.from_arrow_schema(pa.schema([pa.field(column, array.type)]))[column]
    table = table.set_column(index, pa.field(column, array.type), array)
    return Dataset(table.replace_schema_metadata(None), info=DatasetInfo(features=features))


def _refused(name: str, task: str, dataset: Any) -> str:
    with pytest.raises(ValueError) as caught:
        _process_docs(name, task)(dataset)
    message = str(caught.value)
    assert message and "\n" not in message, message
    assert task in message, message
    return message


def test_every_benchmark_declares_its_rows() -> None:
    for name in BENCHMARKS:
        schema = benchmarks()[name].row_schema
        assert schema is not None, f"{name}: no row_schema (the dataset contract)"
        assert any(spec.kind == "text" for spec in schema.fields), f"{name}: its prompt text is not declared"


@pytest.mark.parametrize("name", BENCHMARKS)
def test_the_sample_passes(name: str) -> None:
    task, dataset = _dataset(name)
    prepared = _process_docs(name, task)(dataset)
    assert len(prepared) >= len(dataset)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_missing_column_names_the_task_and_column(name: str) -> None:
    task, dataset = _dataset(name)
    for spec in benchmarks()[name].row_schema.fields_for(task):
        message = _refused(name, task, dataset.remove_columns(spec.name))
        assert repr(spec.name) in message, message


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_null_value_names_the_row_and_field(name: str) -> None:
    task, dataset = _dataset(name)
    schema = benchmarks()[name].row_schema
    for spec in schema.fields_for(task):
        if spec.nullable:
            continue
        rows = list(range(len(dataset)))
        if spec.null_when is not None:  # null is allowed on some rows (HallusionBench's no-image questions)
            other, allowed = spec.null_when
            rows = [i for i, value in enumerate(dataset[other]) if str(value) not in allowed]
        row = rows[0]
        values = dataset.data.table.column(spec.name).to_pylist()
        values[row] = None
        message = _refused(name, task, _replaced(dataset, spec.name, values))
        assert f"field {spec.name!r}" in message and f"row {row}" in message, message
        assert "null" in message, message


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_wrong_type_names_the_row_and_field(name: str) -> None:
    task, dataset = _dataset(name)
    for spec in benchmarks()[name].row_schema.fields_for(task):
        if spec.kind == "any":
            continue
        message = _refused(name, task, _replaced(dataset, spec.name, [WRONG[spec.kind]] * len(dataset)))
        assert f"field {spec.name!r}" in message and "row " in message, message


@pytest.mark.parametrize("name", BENCHMARKS)
def test_empty_text_names_the_row_and_field(name: str) -> None:
    task, dataset = _dataset(name)
    for spec in benchmarks()[name].row_schema.fields_for(task):
        if spec.kind != "text":
            continue
        values = dataset.data.table.column(spec.name).to_pylist()
        values[1] = "  "
        message = _refused(name, task, _replaced(dataset, spec.name, values))
        assert f"field {spec.name!r}" in message and "row 1)" in message and "empty" in message, message
