"""Each check happens once on each scoring path, for every registered benchmark.

The benchmark's option check (its scorer's ``Options.__post_init__``) and the record contract
(``framework.records.validate_records``) are wrapped in spies that count calls and run the real function.
A run's per-task pipeline (``task_pipeline.score_and_report``) and ``lmms-eval-tasks score`` check the
options once and validate the records once, then call the scorer's body (``score.checked``); the public
``score``, called directly, checks its options itself (once) and refuses a bad one.
"""

from __future__ import annotations

import dataclasses
import json
from argparse import Namespace
from collections import Counter
from typing import Any

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework import records as record_contract
from lmms_eval_tasks.framework.registry import benchmarks, get_benchmark
from lmms_eval_tasks.framework.task_index import leaf_tasks
from lmms_eval_tasks.framework.task_pipeline import score_and_report
from tests.skeleton import with_skeleton

BENCHMARKS = sorted(benchmarks())


def _spy(monkeypatch: pytest.MonkeyPatch, calls: Counter, owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` (a module's function or a class's method) by a wrapper that counts its calls
    under ``label`` and runs the real one."""
    real = getattr(owner, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls[label] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, tmp_path) -> Counter:
    """Counts of option checks and record validations; judges offline (the rule judge, no network)."""
    from fake_openai import isolate_judge_env

    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge_cache.sqlite"))
    counted: Counter = Counter()
    _spy(monkeypatch, counted, record_contract, "validate_records", "records")
    every = {get_benchmark(name).loaded.options for name in BENCHMARKS} - {None}  # TDIUC, TallyQA, DVQA: one
    for options in every:
        _spy(monkeypatch, counted, options, "__post_init__", _options_label(options))
    return counted


def _options_label(options: type) -> str:
    """The label the spy of a scorer's options class counts under."""
    return f"options:{options.__module__}.{options.__qualname__}"


def _label(name: str) -> str:
    """The options label of benchmark ``name``."""
    options = get_benchmark(name).loaded.options
    assert options is not None, f"{name}: a scorer without options"
    return _options_label(options)


def _once(name: str, records: int = 1) -> dict[str, int]:
    """One check of benchmark ``name``'s options (none for a scorer without options), ``records``
    validations."""
    options = get_benchmark(name).loaded.options
    return {**({_options_label(options): 1} if options is not None else {}), "records": records}


def _task_and_records(name: str) -> tuple[str, list[dict[str, Any]]]:
    bench = get_benchmark(name)
    task = (leaf_tasks(list(bench.sample_tasks)) or list(bench.sample_tasks))[0]  # the skeleton's: its own
    return task, [{**record, "task": task} for record in bench.record_schema.example]


@pytest.mark.parametrize("name", with_skeleton(BENCHMARKS))
def test_a_runs_pipeline_checks_options_and_records_once(name: str, calls: Counter, tmp_path) -> None:
    task, records = _task_and_records(name)
    hooks = get_benchmark(name).loaded.hooks
    args = Namespace(model="crafted", model_args="", limit=None, seed=None, output_path=str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    score_and_report(hooks, records, task, args, folder=tmp_path / "out")
    assert calls == _once(name)


@pytest.mark.parametrize("name", with_skeleton(BENCHMARKS))
def test_score_cli_checks_options_and_records_once(name: str, calls: Counter, tmp_path, capsys) -> None:
    task, records = _task_and_records(name)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    options = get_benchmark(name).task_options(task)  # the run's own options, as `-o` values
    argv = [item for key, value in options.items() for item in ("-o", f"{key}={json.dumps(value)}")]
    assert main(["score", name, str(path), *argv]) == 0, capsys.readouterr().err
    assert calls == _once(name)


@pytest.mark.parametrize("name", with_skeleton(BENCHMARKS))
def test_the_public_score_checks_its_options_once_and_refuses_a_bad_one(name: str, calls: Counter) -> None:
    bench = get_benchmark(name)
    scorer = bench.loaded.score
    records = [dict(record) for record in bench.record_schema.example]
    scorer(records)
    options = bench.loaded.options
    assert calls[_label(name)] == 1 if options is not None else set(calls) <= {"records"}
    first_option = dataclasses.fields(options)[0].name if options is not None else "no_such_option"
    with pytest.raises(ValueError, match=first_option):
        scorer(records, **{first_option: "no-such-value"})


COMPARED = [name for name in BENCHMARKS if get_benchmark(name).loaded.per_question]


@pytest.mark.parametrize("name", with_skeleton(COMPARED))
def test_compare_checks_options_once_and_each_run_once(name: str, calls: Counter, tmp_path, capsys) -> None:
    """Also HallusionBench's scorer option ``variant`` (a task option) reaches the scorer, not McNemar's
    ``variant`` (it ended in a TypeError: compare_runs() got multiple values for keyword 'variant')."""
    task, records = _task_and_records(name)
    runs = []
    for label in ("a", "b"):
        path = tmp_path / f"{label}.jsonl"
        path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
        runs.append(str(path))
    options = get_benchmark(name).task_options(task)
    argv = [item for key, value in options.items() for item in ("-o", f"{key}={json.dumps(value)}")]
    assert main(["compare", name, *runs, *argv]) == 0, capsys.readouterr().err
    assert calls == _once(name, records=2)  # two runs, each validated once


@pytest.mark.parametrize("name", ["hallusionbench", "contextual"])
def test_rejudge_checks_each_judges_options_once_and_the_records_once(
    name: str, calls: Counter, monkeypatch: pytest.MonkeyPatch, tmp_path, capsys
) -> None:
    from fake_openai import FakeOpenAIServer

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    task, records = _task_and_records(name)
    path = tmp_path / f"{task}_samples.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    with FakeOpenAIServer(lambda prompt: "No") as judge_a, FakeOpenAIServer(lambda prompt: "No") as judge_b:
        arguments = [
            "rejudge", name, str(path), "--judge-model", "judge-b", "--judge-base-url", judge_b.base_url,
            "--baseline-judge-model", "judge-a", "--baseline-base-url", judge_a.base_url,
            "-o", "repeats=1", "--resamples", "20", "--out", str(tmp_path / "rejudge.json"),
        ]  # fmt: skip
        assert main(arguments) == 0, capsys.readouterr().err
    assert calls == {_label(name): 2, "records": 1}  # judge A's options and judge B's, once each
