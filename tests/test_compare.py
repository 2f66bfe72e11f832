"""`compare`: McNemar's test on hand-made pairs (counts and p-values worked out in the comments)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework import registry
from lmms_eval_tasks.framework.comparison import compare_correctness, compare_runs, correctness_by_id, mcnemar
from lmms_eval_tasks.framework.input_checks import RecordError
from tests.helpers import toy_schema


@dataclass(frozen=True)
class ToyOptions:
    """The toy benchmark's one option."""

    strict: bool = False


@registry.scorer(ToyOptions)
def toy_per_question(records: list[dict], options: ToyOptions) -> dict[str, bool | None]:
    """A test benchmark's per-question function: records carry ``question_id`` and ``correct``."""
    return correctness_by_id((r["question_id"] for r in records), (r["correct"] for r in records))


@registry.scorer(ToyOptions)
def toy_score(records: list[dict], options: ToyOptions) -> tuple[dict, dict]:
    """A test benchmark's scorer (the registry's contract): accuracy in percent, no resampling."""
    return {"accuracy": 100.0 * sum(bool(r["correct"]) for r in records) / max(len(records), 1)}, {}


@pytest.fixture
def toy_benchmark():
    registry.register(
        registry.Benchmark(
            name="toy_compare",
            title="toy",
            description="test benchmark",
            behaviour=registry.Behaviour(score=toy_score, per_question=toy_per_question),
            record_schema=toy_schema("question_id", "correct"),
            headline_metrics=("accuracy",),
        )
    )
    yield "toy_compare"
    registry.unregister("toy_compare")


def runs(pattern: list[tuple[int, int]]) -> tuple[list[dict], list[dict]]:
    """Two runs from (A correct, B correct) pairs, question ids q0, q1, ..."""
    run_a = [{"question_id": f"q{i}", "correct": bool(a)} for i, (a, _) in enumerate(pattern)]
    run_b = [{"question_id": f"q{i}", "correct": bool(b)} for i, (_, b) in enumerate(pattern)]
    return run_a, run_b


def test_exact_binomial_below_25_discordant_pairs() -> None:
    # b01 = 2, b10 = 8, n = 10 < 25 -> exact. P(X <= 2 | n=10, 1/2) = (C(10,0)+C(10,1)+C(10,2)) / 2^10
    # = (1 + 10 + 45) / 1024 = 56/1024; two-sided p = 2 * 56/1024 = 0.109375; statistic = min(b01, b10) = 2.
    result = mcnemar(2, 8)
    assert result.method == "exact binomial (two-sided)"
    assert result.statistic == 2.0
    assert result.p_value == pytest.approx(0.109375, abs=1e-12)
    # symmetric in the two counts
    assert mcnemar(8, 2).p_value == pytest.approx(0.109375, abs=1e-12)


def test_exact_p_value_capped_at_one() -> None:
    # b01 = b10 = 3: P(X <= 3 | n=6) = (1+6+15+20)/64 = 42/64; 2 * 42/64 = 1.3125 -> capped to 1.
    assert mcnemar(3, 3).p_value == 1.0
    # no discordant pair at all: nothing to test, p = 1
    assert mcnemar(0, 0).p_value == 1.0


def test_asymptotic_with_continuity_correction_from_25_pairs() -> None:
    # b01 = 10, b10 = 25, n = 35 >= 25 -> asymptotic. statistic = (|10 - 25| - 1)^2 / 35 = 196/35 = 5.6.
    # chi-square(1) survival = erfc(sqrt(5.6 / 2)) = erfc(1.6733200530681511) = 0.017960478...
    result = mcnemar(10, 25)
    assert result.method == "asymptotic chi-square with continuity correction"
    assert result.statistic == pytest.approx(5.6)
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(2.8)))
    assert result.p_value == pytest.approx(0.0179604, abs=1e-6)
    # exactly 25 discordant pairs is already asymptotic: (|12 - 13| - 1)^2 / 25 = 0 -> p = 1
    boundary = mcnemar(12, 13)
    assert boundary.method.startswith("asymptotic") and boundary.statistic == 0.0 and boundary.p_value == 1.0
    # 24 discordant pairs is still exact
    assert mcnemar(12, 12).method.startswith("exact")


def test_against_scipy_reference() -> None:
    stats = pytest.importorskip("scipy.stats")
    for b01, b10 in [(0, 7), (3, 12), (11, 13), (40, 62), (100, 60)]:
        exact = mcnemar(b01, b10, exact=True)
        assert exact.p_value == pytest.approx(stats.binomtest(min(b01, b10), b01 + b10, 0.5).pvalue)
        asymptotic = mcnemar(b01, b10, exact=False)
        assert asymptotic.p_value == pytest.approx(stats.chi2.sf(asymptotic.statistic, 1))


def test_forced_variants_and_bad_counts() -> None:
    assert mcnemar(2, 8, exact=False).method.startswith("asymptotic")  # (6 - 1)^2 / 10 = 2.5
    assert mcnemar(2, 8, exact=False).statistic == pytest.approx(2.5)
    assert mcnemar(40, 62, exact=True).method.startswith("exact")
    with pytest.raises(ValueError, match="b01"):
        mcnemar(-1, 3)


def test_compare_counts_the_four_cells() -> None:
    # 6 both right, 2 both wrong, b01 (A wrong, B right) = 1, b10 (A right, B wrong) = 3: 12 questions.
    # accuracy A = (6 + 3) / 12 = 75 %, accuracy B = (6 + 1) / 12 = 58.33 %.
    # exact: n = 4, P(X <= 1) = (1 + 4)/16 = 5/16, p = 10/16 = 0.625.
    pattern = [(1, 1)] * 6 + [(0, 0)] * 2 + [(0, 1)] + [(1, 0)] * 3
    run_a, run_b = runs(pattern)
    result = compare_correctness(toy_per_question(run_a), toy_per_question(run_b))
    assert (result["both_correct"], result["both_wrong"], result["b01"], result["b10"]) == (6, 2, 1, 3)
    assert result["questions"] == 12 and result["excluded"] == 0
    assert result["accuracy_a"] == pytest.approx(75.0)
    assert result["accuracy_b"] == pytest.approx(700 / 12)
    assert result["p_value"] == pytest.approx(0.625)
    assert result["significant"] is False


def test_none_correctness_is_excluded_from_the_pairs() -> None:
    correct_a = {"a": True, "b": None, "c": False}
    correct_b = {"a": True, "b": True, "c": True}
    result = compare_correctness(correct_a, correct_b)
    assert result["excluded"] == 1 and result["questions"] == 2 and result["b01"] == 1


def test_different_question_sets_are_an_error_naming_them() -> None:
    with pytest.raises(ValueError, match=r"1 only in run A \('x'\); 2 only in run B \('y', 'z'\)"):
        compare_correctness({"q": True, "x": True}, {"q": True, "y": False, "z": True})


def test_duplicate_question_ids_are_an_error() -> None:
    with pytest.raises(RecordError, match="record 2: field 'question_id': duplicate question id 'q0'"):
        correctness_by_id(["q0", "q1", "q0"], [True, False, True])


def test_compare_runs_uses_the_registry(toy_benchmark) -> None:
    run_a, run_b = runs([(0, 1)] * 30 + [(1, 0)] * 5 + [(1, 1)] * 10)
    result = compare_runs(toy_benchmark, run_a, run_b)
    # b01 = 30, b10 = 5: (|30 - 5| - 1)^2 / 35 = 576/35 = 16.457..., p = erfc(sqrt(16.457/2)) ~ 4.98e-5
    assert (result["b01"], result["b10"]) == (30, 5)
    assert result["statistic"] == pytest.approx(576 / 35)
    assert result["p_value"] == pytest.approx(math.erfc(math.sqrt(576 / 70)))
    assert result["significant"] is True
    assert result["benchmark"] == toy_benchmark


def test_benchmark_without_per_question_is_refused() -> None:
    registry.register(
        registry.Benchmark(
            name="toy_no_pq",
            title="toy",
            description="no per-question",
            behaviour=registry.Behaviour(score=toy_score),
            record_schema=toy_schema(),
            headline_metrics=("accuracy",),
        )
    )
    try:
        with pytest.raises(ValueError, match="no per-question correctness"):
            compare_runs("toy_no_pq", [], [])
    finally:
        registry.unregister("toy_no_pq")


def write_jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_cli_prints_json_and_reads_run_folders(toy_benchmark, tmp_path, capsys) -> None:
    run_a, run_b = runs([(1, 1)] * 3 + [(1, 0)] * 2)
    write_jsonl(tmp_path / "a.jsonl", run_a)
    folder = tmp_path / "run_b" / "lmms_eval_tasks" / "20261201_000000"  # a run folder (docs/reports.md)
    folder.mkdir(parents=True)
    write_jsonl(folder / "toy_task_samples.jsonl", run_b)
    arguments = [str(tmp_path / "a.jsonl"), str(folder), "--task", "toy_task"]
    assert main(["compare", toy_benchmark, *arguments]) == 0
    output = json.loads(capsys.readouterr().out)
    # b10 = 2, b01 = 0: exact p = 2 * P(X <= 0 | n=2) = 2 * 1/4 = 0.5
    assert (output["b01"], output["b10"], output["p_value"]) == (0, 2, 0.5)
    assert output["accuracy_a"] == 100.0 and output["accuracy_b"] == 60.0


def test_cli_errors(toy_benchmark, tmp_path, capsys) -> None:
    write_jsonl(tmp_path / "a.jsonl", [{"question_id": "q1", "correct": True}])
    write_jsonl(tmp_path / "b.jsonl", [{"question_id": "q2", "correct": True}])
    assert main(["compare", toy_benchmark, str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 1
    assert "only in run A ('q1')" in capsys.readouterr().err
    assert main(["compare", "nope", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 2
    assert main(["compare", toy_benchmark, str(tmp_path / "missing.jsonl"), str(tmp_path / "b.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    args = ["compare", toy_benchmark, str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "-o", "bogus=1"]
    assert main(args) == 2
    assert "bad option" in capsys.readouterr().err


def test_cli_names_the_benchmark_of_anothers_records_as_score_does(tmp_path, capsys) -> None:
    """`compare contextual HB.jsonl CT.jsonl`: the records' own benchmark and the command that reads them
    (was: a schema error, "field 'image_url': missing"); the host's samples file names the pack's file."""
    write_jsonl(tmp_path / "hb.jsonl", [{"task": "hallusionbench_sample", "prediction": "y"}])
    write_jsonl(tmp_path / "ct.jsonl", [{"task": "contextual_sample", "prediction": "x"}])
    hb, ct = str(tmp_path / "hb.jsonl"), str(tmp_path / "ct.jsonl")
    assert main(["compare", "contextual", hb, ct]) == 2
    assert capsys.readouterr().err.strip() == (
        f"lmms-eval-tasks compare: {hb} holds records of task hallusionbench_sample (benchmark "
        f"hallusionbench), not contextual: run `lmms-eval-tasks compare hallusionbench {hb} {ct}`"
    )
    host = tmp_path / "20261201_000000_samples_contextual_sample.jsonl"
    write_jsonl(host, [{"doc_id": 0, "resps": [["x"]], "filtered_resps": ["x"]}])
    assert main(["compare", "contextual", str(host), ct]) == 2
    assert "is the host's samples file" in capsys.readouterr().err


def test_cli_rejects_a_bad_option_value(tmp_path, capsys) -> None:
    row = {"question_id": 1, "template_id": "data", "answer": "5", "prediction": "5"}
    write_jsonl(tmp_path / "a.jsonl", [row])
    args = ["compare", "dvqa", str(tmp_path / "a.jsonl"), str(tmp_path / "a.jsonl"), "-o", "protocol=offical"]
    assert main(args) == 2
    assert 'option protocol: expected one of "default", "official"' in capsys.readouterr().err


# --- the pack's benchmarks ----------------------------------------------------------------------------


def dare_record(question: str, gold: str, prediction: str, **extra) -> dict:
    return {
        "id": question,
        "category": "count",
        "setup": "single",
        "answer": [gold],
        "A": "one",
        "B": "two",
        "C": "three",
        "D": "four",
        "format": "gen",
        "prompt": 1,
        "prediction": prediction,
        **extra,
    }


def test_dare_per_question_uses_its_verdicts() -> None:
    # q1: A right, B wrong (b10); q2: A wrong, B right (b01); q3: both right; binary q4 (gold {A, C}):
    # run A says yes to A and C only -> right; run B also says yes to D -> wrong (b10).
    def binary(prediction_for: dict[str, str]) -> list[dict]:
        return [
            dare_record("q4", "A", prediction_for[letter], setup="multi", format="binary", option=letter)
            | {"answer": ["A", "C"]}
            for letter in "ABCD"
        ]

    run_a = [dare_record("q1", "A", "A"), dare_record("q2", "B", "C"), dare_record("q3", "C", "C")]
    run_a += binary({"A": "Yes", "B": "No", "C": "Yes", "D": "No"})
    run_b = [dare_record("q1", "A", "B"), dare_record("q2", "B", "B"), dare_record("q3", "C", "C")]
    run_b += binary({"A": "Yes", "B": "No", "C": "Yes", "D": "Yes"})
    from lmms_eval_tasks.tasks.dare.scoring import per_question_correct

    correct_a = per_question_correct(run_a)
    assert correct_a == {
        "single/gen/p1/standard/count/q1": True,
        "single/gen/p1/standard/count/q2": False,
        "single/gen/p1/standard/count/q3": True,
        "multi/binary/p1/binary/count/q4": True,
    }
    # the same id in another category is another question
    assert per_question_correct([*run_a, dare_record("q1", "A", "A", category="order")])[
        "single/gen/p1/standard/order/q1"
    ]
    result = compare_runs("dare", run_a, run_b)
    assert (result["b01"], result["b10"], result["both_correct"]) == (1, 2, 1)
    # exact: n = 3, P(X <= 1) = (1 + 3)/8, p = 2 * 4/8 = 1.0
    assert result["p_value"] == 1.0


def hallusion_record(question_id: str, verdict) -> dict:
    return {
        "category": "VD",
        "subcategory": "illusion",
        "visual_input": "1",
        "set_id": "0",
        "figure_id": "0",
        "sample_note": "note",
        "question_id": question_id,
        "question": "Is it?",
        "gt_answer_details": "It is.",
        "gt_answer": "1",
        "filename": "./VD/illusion/0_0.png",
        "prediction": "Yes",
        "judge_verdict": verdict,
    }


def test_hallusionbench_per_question_majority_over_repeats() -> None:
    from lmms_eval_tasks.tasks.hallusionbench.scoring import per_question_correct

    rows = [
        hallusion_record("0", ["1", "1", "0"]),  # 2 of 3 correct -> True
        hallusion_record("1", ["1", "0", None]),  # 1 of 2 judged: a tie -> False
        hallusion_record("2", [None, None, None]),  # never judged -> None (excluded)
        hallusion_record("3", ["0", "0", "1"]),  # 1 of 3 -> False
    ]
    assert per_question_correct(rows) == {
        "VD/illusion/0/0/0": True,
        "VD/illusion/0/0/1": False,
        "VD/illusion/0/0/2": None,
        "VD/illusion/0/0/3": False,
    }
    other = [hallusion_record(str(i), ["1", "1", "1"]) for i in range(4)]
    result = compare_runs("hallusionbench", rows, other)
    # pairs: q0 both right, q1 and q3 b01, q2 excluded
    assert (result["both_correct"], result["b01"], result["b10"], result["excluded"]) == (1, 2, 0, 1)
