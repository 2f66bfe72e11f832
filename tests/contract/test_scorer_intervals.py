"""One definition per number, checked against EVERY registered benchmark: the point estimate of each
headline metric's standard error (the bootstrap of the scorer's ``details["resampling"]``) equals the
value ``score`` reports, on the schema's example records and on seeded randomised records built from
them (more records, other identities, random predictions). A registered copy of a benchmark whose scorer
drifts from its resampling fails the same check, so it cannot pass vacuously.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import random
from typing import Any

import pytest

from lmms_eval_tasks.framework import registry
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.intervals import RESAMPLING, attach_intervals, headline
from lmms_eval_tasks.framework.registry import Behaviour, Benchmark, benchmarks, get_benchmark, scorer
from tests.skeleton import with_skeleton

PACK = sorted(benchmarks())
COPY_KEYS = ("question_id", "set_id", "id", "image_url")  # an identity field renamed per copy
JUNK = ("", "yes", "no", "Yes", "2", "two", "A", "B, C", "[[0, 0, 10, 10]]", "Judgement: Yes", "none")
SEEDS = (0, 1, 2)


@pytest.fixture(autouse=True)
def _offline_rule_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    for name in ("OPENAI_API_KEY", "OPENAI_API_URL", "AZURE_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def example(name: str) -> list[dict[str, Any]]:
    """The schema's minimal valid record set (a fresh copy)."""
    return [json.loads(json.dumps(record)) for record in get_benchmark(name).record_schema.example]


def randomised(name: str, seed: int, copies: int = 12) -> list[dict[str, Any]]:
    """``copies`` renamed copies of the example, each record's prediction drawn (seeded) from the
    example's own strings and a few junk answers; the record contract is checked by the caller."""
    rng = random.Random(seed)
    base = example(name)
    key = next((key for key in COPY_KEYS if all(key in record for record in base)), None)
    pool = sorted({str(v) for r in base for v in r.values() if isinstance(v, str | int) and v is not True})
    pool += list(JUNK)
    records = []
    for number in range(copies if key else 1):
        for record in copy.deepcopy(base):
            if key is not None:
                value = record[key]
                record[key] = value + 1000 * number if isinstance(value, int) else f"{value}~{number}"
            record["prediction"] = rng.choice(pool)
            records.append(record)
    return records


def violations(name: str, records: list[dict[str, Any]]) -> list[str]:
    """Every headline metric whose bootstrap point estimate is not the scorer's value (or not covered)."""
    benchmark = get_benchmark(name)
    metrics, details = benchmark.score(records)
    resampling = details.get(RESAMPLING)
    if resampling is None:
        return [f"{name}: score gives no resampling, so its headline numbers have no standard error"]
    found = []
    intervals = headline(name, resampling, 20, 0)
    counts = set(benchmark.count_keys)
    for metric in benchmark.headline_metrics:
        if metric in counts and metric not in intervals:
            continue  # a count (unparsed, unjudged): no interval
        base, _, side = metric.rpartition("_ci95_")
        if side in ("low", "high") and base in intervals:  # a bound the scorer reports: the interval's own
            bound = getattr(intervals[base], side)
            if intervals[base].method == "normal" and metrics.get(metric) != bound:
                found.append(f"{name}: {metric} scored {metrics.get(metric)!r}, interval {side} {bound!r}")
            continue
        if metric not in intervals:
            value = metrics.get(metric)  # absent or undefined: the run has nothing to estimate it from
            if isinstance(value, int | float) and math.isfinite(value):
                found.append(f"{name}: {metric} has no interval")
            continue
        value, estimate = metrics.get(metric), intervals[metric].estimate
        defined = isinstance(value, int | float) and math.isfinite(value)
        if not defined and estimate is None:
            continue
        if not defined or estimate is None or value != estimate:
            found.append(f"{name}: {metric} scored {value!r}, interval estimate {estimate!r}")
    return found


@pytest.mark.parametrize("name", with_skeleton(PACK))
def test_interval_estimates_are_the_scorer_values_on_the_example(name: str) -> None:
    assert violations(name, example(name)) == []


@pytest.mark.parametrize("name", with_skeleton(PACK))
@pytest.mark.parametrize("seed", SEEDS)
def test_interval_estimates_are_the_scorer_values_on_randomised_records(name: str, seed: int) -> None:
    records = randomised(name, seed)
    get_benchmark(name).validate(records)  # the copies are valid records: the check is on real input
    assert violations(name, records) == []


@pytest.mark.parametrize("name", with_skeleton(PACK))
def test_every_headline_number_names_its_resampling_unit(name: str) -> None:
    resampling = get_benchmark(name).score(example(name))[1][RESAMPLING]
    assert isinstance(resampling.unit, str) and resampling.unit
    assert len(resampling.units) == len(resampling.values)


# ---- the check fails on a deliberately broken copy ----------------------------------------------------


def score_with_drifted_point(records: list[dict[str, Any]], **options: Any) -> tuple[dict, dict]:
    """TDIUC's scorer whose reported macro accuracy no longer comes from its resampling."""
    from lmms_eval_tasks.tasks.tdiuc.scoring import score

    metrics, details = score(records, **options)
    metrics["macro_accuracy"] = metrics["micro_accuracy"]  # a second definition of the number
    return metrics, details


def score_with_drifted_interval(records: list[dict[str, Any]], **options: Any) -> tuple[dict, dict]:
    """TDIUC's scorer whose resampling computes micro accuracy differently from what it reports."""
    from lmms_eval_tasks.tasks.tdiuc.scoring import score

    metrics, details = score(records, **options)
    statistic = details[RESAMPLING].statistic

    def drifted(totals: Any) -> dict[str, Any]:
        out = statistic(totals)
        out["micro_accuracy"] = out["micro_accuracy"] + 1.0  # one point off
        return out

    details[RESAMPLING] = dataclasses.replace(details[RESAMPLING], statistic=drifted)
    return metrics, details


def _with_scorer(benchmark: Benchmark, name: str, score: Any) -> Benchmark:
    """A registered copy of ``benchmark`` called ``name`` whose scorer is ``score(records)`` (no options)."""
    behaviour = Behaviour(score=scorer()(score), screening=benchmark.loaded.screening)
    return dataclasses.replace(benchmark, name=name, behaviour=behaviour)


@pytest.mark.parametrize(
    ("scorer", "metric"),
    [("score_with_drifted_point", "macro_accuracy"), ("score_with_drifted_interval", "micro_accuracy")],
)
def test_the_contract_fails_on_a_broken_copy(scorer: str, metric: str) -> None:
    broken = _with_scorer(get_benchmark("tdiuc"), "tdiuc_broken", globals()[scorer])
    registry.register(broken)
    try:
        assert isinstance(get_benchmark("tdiuc_broken"), Benchmark)
        records = [
            {"question_id": i, "question_type": kind, "labeled_answer": "red", "prediction": answer}
            for i, (kind, answer) in enumerate(
                [("color", "red"), ("color", "red"), ("color", "blue"), ("counting", "two")]
            )
        ]
        # micro 2/4 = 50 %, macro (2/3 + 0/1) / 2 = 33.3 %: the drifts change the numbers
        found = violations("tdiuc_broken", records)
        assert any(f": {metric} scored" in line for line in found), found
        assert violations("tdiuc", records) == []  # the real one, same records, holds
    finally:
        registry.unregister("tdiuc_broken")


def test_a_scorer_without_resampling_is_a_violation() -> None:
    def no_resampling(records: list[dict[str, Any]], **options: Any) -> tuple[dict, dict]:
        from lmms_eval_tasks.tasks.dvqa.scoring import score

        metrics, details = score(records, **options)
        details.pop(RESAMPLING)
        return metrics, details

    bare = _with_scorer(get_benchmark("dvqa"), "dvqa_bare", no_resampling)
    registry.register(bare)
    try:
        assert violations("dvqa_bare", example("dvqa")) == [
            "dvqa_bare: score gives no resampling, so its headline numbers have no standard error"
        ]
        _, details = attach_intervals("dvqa_bare", *bare.score(example("dvqa")))  # a run says why, not N/A
        assert details["uncertainty"]["_error"]["reason"].endswith("no standard error for any number")
    finally:
        registry.unregister("dvqa_bare")


def test_randomised_records_differ_by_seed_and_stay_valid() -> None:
    for name in PACK:
        one, two = randomised(name, 0), randomised(name, 1)
        assert len(one) >= len(example(name))
        try:
            get_benchmark(name).validate(one)
        except RecordError as error:  # pragma: no cover - the message names the broken field
            pytest.fail(f"{name}: randomised records are not valid: {error}")
        if len(one) > 4:
            assert [r["prediction"] for r in one] != [r["prediction"] for r in two], name
