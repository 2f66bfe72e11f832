"""The record contract, checked against EVERY registered benchmark through `lmms-eval-tasks score` and
`compare`: a benchmark added later gets these checks from its ``RecordSchema`` without writing them.

Each benchmark's schema declares a minimal valid record set (``RecordSchema.example``); every case below
breaks one thing in it and expects exit 1 with one line naming the record (and its line) and the field.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework.registry import benchmarks, get_benchmark
from tests.skeleton import with_skeleton

BENCHMARKS = sorted(benchmarks())
CHECKED = with_skeleton(BENCHMARKS)  # the registered benchmarks and the new-benchmark skeleton
# (label, bad value): each replaces a required field's value in record 0.
BAD_VALUES: list[tuple[str, Any]] = [
    ("null", None),
    ("list", ["x"]),
    ("object", {"x": 1}),
    ("nan", math.nan),
    ("infinity", math.inf),
]


@pytest.fixture(autouse=True)
def _offline_rule_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    for name in ("OPENAI_API_KEY", "OPENAI_API_URL", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _example(name: str) -> list[dict[str, Any]]:
    return [json.loads(json.dumps(record)) for record in benchmarks()[name].record_schema.example]


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _score(capsys: pytest.CaptureFixture[str], name: str, path: Path) -> tuple[int, str]:
    code = main(["score", name, str(path)])
    captured = capsys.readouterr()
    return code, captured.err.strip() if code else captured.out


def _refused(capsys: pytest.CaptureFixture[str], name: str, path: Path) -> str:
    code, error = _score(capsys, name, path)
    assert code == 1, error
    assert error and "\n" not in error and "Traceback" not in error, error
    assert error.startswith(f"lmms-eval-tasks score: {path}: "), error
    return error


def _kind_refuses(kind: str, label: str) -> bool:
    """Whether a bad value of this label is wrong for a field of this kind ("any" accepts everything)."""
    return not (kind == "any" or (label == "list" and kind in ("list", "strings")) or (label == "object"
                and kind == "object"))  # fmt: skip


def test_every_benchmark_declares_a_schema_with_a_valid_example() -> None:
    assert BENCHMARKS, "no benchmark registered"
    for name in BENCHMARKS:
        schema = benchmarks()[name].record_schema
        assert len(schema.example) >= 2, f"{name}: the schema's example needs at least two records"
        benchmarks()[name].validate(_example(name))


@pytest.mark.parametrize("name", CHECKED)
def test_the_example_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out = _score(capsys, name, _write(tmp_path / "ok.jsonl", _example(name)))
    assert code == 0, out
    assert json.loads(out)


@pytest.mark.parametrize("name", CHECKED)
def test_two_copies_of_a_record_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    records = _example(name)
    error = _refused(capsys, name, _write(tmp_path / "dup.jsonl", [*records, records[0]]))
    last = len(records)
    assert f"record {last} (line {last + 1}): field " in error
    assert "duplicate record (" in error and "also record 0 (line 1)" in error


@pytest.mark.parametrize("name", CHECKED)
def test_two_copies_with_different_predictions_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    records = _example(name)
    schema = benchmarks()[name].record_schema
    prediction = next(spec.name for spec in schema.fields if spec.name == "prediction")
    other = {**records[0], prediction: "something else entirely"}
    error = _refused(capsys, name, _write(tmp_path / "conflict.jsonl", [*records, other]))
    assert "conflicting record (" in error and "also record 0 (line 1)" in error


def _required_cases() -> list[tuple[str, str, str]]:
    cases = []
    for name in BENCHMARKS:
        for spec in benchmarks()[name].record_schema.required_fields():
            cases.append((name, spec.name, "missing"))
            for label, _ in BAD_VALUES:
                if label == "null" and spec.nullable:
                    continue
                if _kind_refuses(spec.kind, label):
                    cases.append((name, spec.name, label))
            if spec.kind not in ("any", "str", "strings", "scalar", "id"):
                cases.append((name, spec.name, "wrong-type-string"))
            elif spec.kind in ("str", "strings"):
                cases.append((name, spec.name, "wrong-type-number"))
    return cases


@pytest.mark.parametrize(("name", "field", "case"), _required_cases())
def test_each_required_field_broken_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, field: str, case: str
) -> None:
    records = _example(name)
    if case == "missing":
        del records[0][field]
    else:
        records[0][field] = {"wrong-type-string": "x", "wrong-type-number": 7, **dict(BAD_VALUES)}[case]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")  # NaN written as NaN
    error = _refused(capsys, name, path)
    assert f"record 0 (line 1): field {field!r}: " in error
    if case == "missing":
        assert "missing" in error
    if case in ("nan", "infinity"):
        assert "NaN" in error or "Infinity" in error


@pytest.mark.parametrize("name", CHECKED)
def test_an_unknown_category_value_is_refused_listing_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    schema = benchmarks()[name].record_schema
    with_choices = [spec for spec in schema.required_fields() if spec.choices is not None]
    if not with_choices:
        pytest.skip(f"{name} declares no field with allowed values")
    for spec in with_choices:
        records = _example(name)
        bad = 99 if spec.kind == "int" else "no_such_value_zz"
        records[0][spec.name] = bad
        error = _refused(capsys, name, _write(tmp_path / f"{spec.name}.jsonl", records))
        known = schema.choices_of(spec)
        assert f"field {spec.name!r}: unknown value {bad!r}; known: " in error
        assert all(str(choice) in error for choice in known)


@pytest.mark.parametrize("name", CHECKED)
def test_file_problems_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    records = _example(name)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    code, error = _score(capsys, name, empty)  # not records at all: a usage error (exit 2), in one line
    assert code == 2 and error == (
        f"lmms-eval-tasks score: {empty} is empty (no records): give the pack's <task>_samples.jsonl of a run"
    ), (code, error)
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n" + "\n\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    code, out = _score(capsys, name, blank)
    assert code == 0, out  # blank lines are skipped, not records
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(json.dumps(records[0]).encode() + b"\n" + b'{"x": "caf\xe9"}\n')
    assert "record at line 2: field '<encoding>': not UTF-8" in _refused(capsys, name, latin)
    truncated = tmp_path / "truncated.jsonl"
    text = "".join(json.dumps(r) + "\n" for r in records)
    truncated.write_text(text + json.dumps(records[0])[:-7], encoding="utf-8")
    error = _refused(capsys, name, truncated)
    assert f"record at line {len(records) + 1}: field '<json>': not valid JSON" in error
    # blank lines shift lines from record numbers: the error names both
    shifted = tmp_path / "shifted.jsonl"
    shifted.write_text("\n\n" + "\n".join(json.dumps(r) for r in [*records, records[0]]) + "\n", "utf-8")
    assert f"record {len(records)} (line {len(records) + 3}): " in _refused(capsys, name, shifted)


@pytest.mark.parametrize("name", CHECKED)
def test_a_hostile_prediction_scores_in_linear_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A 100 kB runaway generation: no exception, and ten times the text costs about ten times the time
    (under 40x allows noise; a quadratic parser would take about 100x)."""
    units = ["A, B, [1, 2, 3, 4 ", "(" * 3 + "yes no 1,000 ", "answer: " + " " * 7]
    timings = {}
    for size in (10_000, 100_000):
        best = math.inf
        for unit in units:
            records = _example(name)
            records[0]["prediction"] = (unit * (size // len(unit) + 1))[:size]
            path = _write(tmp_path / f"hostile{size}.jsonl", records)
            started = time.process_time()
            code, out = _score(capsys, name, path)
            elapsed = time.process_time() - started
            assert code == 0, out
            best = min(best, elapsed) if unit is units[0] else best
            timings[(size, unit)] = elapsed
        timings[size] = sum(timings[(size, unit)] for unit in units)
    assert timings[100_000] < 40 * timings[10_000] + 0.5, timings


def _hook_task(name: str) -> str:
    """A real task of the benchmark (from the generated host index), the one its sample runs if a task."""
    entries = json.loads((Path(__file__).parents[2] / "lmms_eval_tasks/tasks/host_index.json").read_text())
    tasks = sorted(
        task
        for task, entry in entries["entries"].items()
        if entry["type"] == "task" and benchmarks()[name].owns_task(task) and "sample" in task
    ) or sorted(benchmarks()[name].sample_tasks)  # a benchmark installed next to the pack: its own
    assert tasks, f"{name}: no sample task in the host index"
    return tasks[0]


@pytest.mark.parametrize("name", BENCHMARKS)
@pytest.mark.parametrize("copy", ["duplicate", "conflicting"])
def test_the_harness_path_refuses_a_second_copy(name: str, copy: str) -> None:
    # the hooks' aggregation (task_pipeline.score_and_report, what lmms-eval calls) runs the same contract
    from lmms_eval_tasks.framework.input_checks import RecordError

    hooks = get_benchmark(name).loaded.hooks
    task = _hook_task(name)
    records = [{**record, "task": task} for record in _example(name)]
    second = dict(records[0]) if copy == "duplicate" else {**records[0], "prediction": "something else"}
    metric = hooks.metric_keys(task)[0]
    with pytest.raises(RecordError) as caught:
        hooks.aggregator(metric)([*records, second])
    assert str(caught.value).startswith(f"record {len(records)}: field "), caught.value
    assert f"{copy} record (" in str(caught.value) and "also record 0" in str(caught.value)
