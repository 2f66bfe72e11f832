"""The dataset contract, checked against EVERY registered benchmark through its tasks' ``process_docs``: a
benchmark added later gets these checks from its ``RowSchema`` without writing them.

Each benchmark's bundled sample task is the valid starting point (real ``datasets`` parquet files, the
task's own ``process_docs``); every case breaks one column a hook reads and expects one line naming the task
and the column (a missing column) or the row's identity and the field (a null, wrong-typed or empty value),
raised when the docs are prepared, before any model runs. The prepared rows then give a real model what it
reads: decoded PIL images and a prompt (``model_input_problems``; ``random_guess`` never looks at an image).
The skeleton of ``new-benchmark`` is checked with the registered benchmarks (``conftest.SKELETON``).
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks.framework import task_index
from lmms_eval_tasks.framework.registry import benchmarks
from tests.skeleton import SKELETON, task_folder, with_skeleton

BENCHMARKS = with_skeleton(sorted(benchmarks()))
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
def _sample_task(name: str) -> tuple[str, Path, dict[str, Any]]:
    """(task, parquet file, YAML config) of the benchmark's bundled-sample task on one parquet file whose
    hooks read the most columns (DARE: a single_var task, which also reads ``instance_id``)."""
    benchmark = benchmarks()[name]
    folder = task_folder(name)
    found: list[tuple[int, str, Path, dict[str, Any]]] = []
    for entry in task_index.pack_tasks(folder):
        if entry.kind != "task" or "_sample" not in entry.name or not benchmark.owns_task(entry.name):
            continue
        config = task_index.task_config(entry, folder)
        files = (config.get("dataset_kwargs") or {}).get("data_files")
        split = config.get("test_split") or config.get("validation_split") or "train"
        if config.get("dataset_path") != "parquet" or not files:
            continue
        relative = files if isinstance(files, str) else files.get(split)
        if isinstance(relative, str):
            # relative to the YAML file that names it: the task's own or its template's (one folder up)
            folders = ((folder / entry.path).parent, (folder / entry.path).parent.parent)
            path = next((place / relative for place in folders if (place / relative).is_file()), None)
            assert path is not None, f"{entry.name}: {relative} not found"
            read = len(benchmark.row_schema.fields_for(entry.name))
            found.append((-read, entry.name, path, config))
    assert found, f"{name}: no bundled sample task on one parquet file"
    _, task, path, config = min(found, key=lambda item: item[:2])
    return task, path, config


def _dataset(name: str) -> tuple[str, Any]:
    from datasets import load_dataset

    task, path, _config = _sample_task(name)
    return task, load_dataset("parquet", data_files=str(path), split="train")


def _hook(path: str) -> Any:
    """A YAML ``!function`` target (``module.function``), looked up when called (a test may replace it)."""
    module, _, function = path.rpartition(".")
    return getattr(importlib.import_module(module), function)


def _process_docs(name: str, task: str):
    """The task's own ``process_docs``, as its YAML names it (what the host calls)."""
    return _hook(_sample_task(name)[2]["process_docs"])


def model_input_problems(config: dict[str, Any], docs: Any) -> tuple[list[str], int]:
    """(what a real model could not read, how many images it got) over prepared ``docs``: a visual of
    ``doc_to_visual`` (or an image in ``doc_to_messages``, where the task defines it) that is no decoded
    PIL image, a prompt of ``doc_to_text`` that is not non-empty text. One line per problem."""
    from PIL import Image

    kwargs = (config.get("lmms_eval_specific_kwargs") or {}).get("default")
    problems, images = [], 0
    for row, doc in enumerate(docs):
        visuals = [("doc_to_visual", visual) for visual in _hook(config["doc_to_visual"])(doc) or []]
        if config.get("doc_to_messages"):
            for message in _hook(config["doc_to_messages"])(doc):
                parts = [part for part in message.get("content") or [] if part.get("type") == "image"]
                visuals += [("doc_to_messages", part.get("url")) for part in parts]
        for hook, visual in visuals:
            if not isinstance(visual, Image.Image):
                problems.append(f"row {row}: {hook} gave {type(visual).__name__}, not a decoded PIL image")
                continue
            visual.load()
            images += 1
        text = _hook(config["doc_to_text"])(doc, lmms_eval_specific_kwargs=kwargs)
        if not isinstance(text, str) or not text.strip():
            problems.append(f"row {row}: doc_to_text gave {text!r}, not a prompt")
    return problems, images


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
    for name in benchmarks():
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


@pytest.mark.parametrize("name", BENCHMARKS)
def test_a_real_model_reads_decoded_images_and_a_prompt(name: str) -> None:
    task, dataset = _dataset(name)
    problems, images = model_input_problems(_sample_task(name)[2], _process_docs(name, task)(dataset))
    assert not problems, f"{task}: {problems[:3]}"
    assert images, f"{task}: no image in its sample"


@pytest.mark.parametrize("name", [SKELETON])
def test_an_undecoded_image_handed_to_the_model_fails_the_check(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The old trap: the row schema leaves images undecoded (bytes and path), a ``doc_to_visual`` that
    returns the column's value hands the model a dict (a real model then fails on ``.convert``)."""
    task, dataset = _dataset(name)
    monkeypatch.setattr(importlib.import_module(f"{name}.hooks"), "doc_to_visual", lambda doc: [doc["image"]])
    problems, images = model_input_problems(_sample_task(name)[2], _process_docs(name, task)(dataset))
    assert images == 0 and len(problems) == len(dataset)
    assert problems[0] == "row 0: doc_to_visual gave dict, not a decoded PIL image"
