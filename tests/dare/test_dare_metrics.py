"""DARE metrics against numbers computed by hand from small crafted record sets."""

from __future__ import annotations

import json
import math

import pytest

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.framework.task_pipeline import score_and_report
from lmms_eval_tasks.tasks.dare.scoring import (
    format_table,
    gold_letters,
    score,
    score_record,
    summary_table,
)

OPTIONS = {"A": "one", "B": "two", "C": "three", "D": "four"}


def record(
    question: str,
    answer: list[str],
    prediction: str | None,
    *,
    setup: str = "single",
    answer_format: str = "gen",
    prompt: int = 1,
    category: str = "count",
    instance: str | None = None,
    **extra: object,
) -> dict:
    return {
        "id": question,
        "instance_id": instance or question,
        "category": category,
        "setup": setup,
        "answer": answer,
        **OPTIONS,
        "format": answer_format,
        "prompt": prompt,
        "prediction": prediction,
        **extra,
    }


def single_grid() -> list[dict]:
    """Gen format, 4 questions (q1, q2 count; q3, q4 order), gold A, B, C, D, three prompts.

    p1: q1 right, q2 right, q3 right, q4 wrong   -> 3/4 = 75 %   (count 2/2, order 1/2)
    p2: q1 right, q2 wrong, q3 right, q4 wrong   -> 2/4 = 50 %   (count 1/2, order 1/2)
    p3: all right                                -> 4/4 = 100 %  (count 2/2, order 2/2)
    """
    gold = {"q1": "A", "q2": "B", "q3": "C", "q4": "D"}
    category = {"q1": "count", "q2": "count", "q3": "order", "q4": "order"}
    wrong = {(1, "q4"), (2, "q2"), (2, "q4")}
    return [
        record(
            question,
            [gold[question]],
            "A" if (prompt, question) in wrong and gold[question] != "A" else gold[question],
            prompt=prompt,
            category=category[question],
        )
        for prompt in (1, 2, 3)
        for question in gold
    ]


def test_single_accuracy_mean_and_std_over_prompts() -> None:
    metrics = score(single_grid())[0]
    assert metrics["single_gen_p1_accuracy"] == 75.0
    assert metrics["single_gen_p2_accuracy"] == 50.0
    assert metrics["single_gen_p3_accuracy"] == 100.0
    # mean (75 + 50 + 100) / 3 = 75; population std sqrt((0 + 625 + 625) / 3) = 20.4124
    assert metrics["single_accuracy"] == 75.0
    assert metrics["single_accuracy_std_over_prompts"] == pytest.approx(math.sqrt(1250 / 3))
    # per category: count (100 + 50 + 100) / 3 = 83.33, std sqrt((16.67^2*2 + 33.33^2) / 3) = 23.57
    assert metrics["single_accuracy__count"] == pytest.approx(250 / 3)
    assert metrics["single_accuracy_std_over_prompts__count"] == pytest.approx(
        math.sqrt(((50 / 3) ** 2 * 2 + (100 / 3) ** 2) / 3)
    )
    # order: (50 + 50 + 100) / 3 = 66.67
    assert metrics["single_accuracy__order"] == pytest.approx(200 / 3)
    assert metrics["unparsed"] == 0


def test_sample_std_is_an_option() -> None:
    # sample std: sqrt(1250 / 2) = 25
    assert score(single_grid(), std_ddof=1)[0]["single_accuracy_std_over_prompts"] == pytest.approx(25.0)


def test_format_axis_and_primary_format() -> None:
    records = single_grid()
    # JSON, prompt 1: q1 right, the rest unparsable -> 25 %; log, prompt 1: all right -> 100 %.
    records += [
        record(
            question,
            [gold],
            json.dumps({"answer": gold}) if question == "q1" else "garbage",
            answer_format="json",
        )
        for question, gold in (("q1", "A"), ("q2", "B"), ("q3", "C"), ("q4", "D"))
    ]
    records += [
        record(question, [gold], gold, answer_format="log")
        for question, gold in (("q1", "A"), ("q2", "B"), ("q3", "C"), ("q4", "D"))
    ]
    metrics = score(records)[0]
    assert metrics["single_json_p1_accuracy"] == 25.0
    assert metrics["single_log_p1_accuracy"] == 100.0
    # formats on their shared prompt (1): gen 75, log 100, json 25 -> range 100 - 25 = 75
    assert metrics["single_format_range"] == 75.0
    assert metrics["unparsed"] == 3
    assert metrics["unparsed_single_json_p1"] == 3
    # headline stays on gen when present, and can be switched
    assert metrics["single_accuracy"] == 75.0
    assert score(records, primary_format="log")[0]["single_accuracy"] == 100.0


def test_worst_case_over_option_variants_and_drop() -> None:
    """Three variants per instance, prompt 1.

    i1: right, right, right -> counts; i2: right, wrong, right -> does not; i3: wrong x3; i4: right x3.
    Worst case = 2/4 = 50 %, while plain accuracy over the 12 rows would be 8/12 = 66.7 %.
    Single-correct gen p1 from single_grid = 75 % -> drop 75 - 50 = 25 points.
    """
    outcomes = {"i1": (1, 1, 1), "i2": (1, 0, 1), "i3": (0, 0, 0), "i4": (1, 1, 1)}
    records = single_grid()
    for instance, results in outcomes.items():
        for variant, right in enumerate(results):
            records.append(
                record(
                    f"{instance}-{variant}",
                    ["B"],
                    "B" if right else "C",
                    setup="single_var",
                    instance=instance,
                    category="order" if instance == "i3" else "count",
                )
            )
    metrics = score(records)[0]
    assert metrics["single_var_gen_p1_accuracy"] == 50.0
    assert metrics["single_var_accuracy"] == 50.0
    assert metrics["single_var_gen_p1_drop"] == 25.0
    assert metrics["single_var_drop"] == 25.0
    assert metrics["single_var_instances"] == 4
    # count: i1, i2, i4 -> 2/3 = 66.67 %; single count p1 = 100 % -> drop 33.33
    assert metrics["single_var_accuracy__count"] == pytest.approx(200 / 3)
    assert metrics["single_var_drop__count"] == pytest.approx(100 / 3)
    # order: i3 -> 0 %
    assert metrics["single_var_accuracy__order"] == 0.0


def test_worst_case_without_single_records_has_no_drop() -> None:
    records = [record(f"v{n}", ["A"], "A", setup="single_var", instance="i1") for n in range(3)]
    metrics = score(records)[0]
    assert metrics["single_var_accuracy"] == 100.0
    assert math.isnan(metrics["single_var_drop"])


def multi_records(prompt: int = 1) -> list[dict]:
    """Six questions; gold sizes 0, 0, 1, 2, 2, 4.

    m1 gold {}      pred NONE      exact, F1 1
    m2 gold {}      pred "A"       wrong, F1 0
    m3 gold {B}     pred "B, C"    wrong, P 1/2 R 1 -> F1 2/3
    m4 gold {A, C}  pred "A, C"    exact, F1 1
    m5 gold {B, D}  pred "D"       wrong, P 1 R 1/2 -> F1 2/3
    m6 gold ABCD    pred garbage   unparsed, wrong, F1 0
    exact per k: k0 1/2 = 50, k1 0/1 = 0, k2 1/2 = 50, k3 no questions (NaN), k4 0/1 = 0
    F1 mean: (1 + 0 + 2/3 + 1 + 2/3 + 0) / 6 = (10/3) / 6 = 55.56 %
    """
    rows = [
        ("m1", [], "NONE"),
        ("m2", [], "A"),
        ("m3", ["B"], "B, C"),
        ("m4", ["A", "C"], "A, C"),
        ("m5", ["B", "D"], "D"),
        ("m6", ["A", "B", "C", "D"], "I cannot tell"),
    ]
    return [
        record(question, gold, prediction, setup="multi", prompt=prompt)
        for question, gold, prediction in rows
    ]


def test_multi_exact_per_number_of_gold_answers_and_f1() -> None:
    metrics = score(multi_records())[0]
    assert metrics["multi_exact_k0"] == 50.0
    assert metrics["multi_exact_k1"] == 0.0
    assert metrics["multi_exact_k2"] == 50.0
    assert math.isnan(metrics["multi_exact_k3"])
    assert metrics["multi_exact_k4"] == 0.0
    assert metrics["multi_f1"] == pytest.approx(100 * (10 / 3) / 6)
    assert metrics["unparsed"] == 1
    assert "multi_accuracy" not in metrics  # never one pooled exact-set accuracy


def test_multi_answers_given_as_option_texts() -> None:
    records = multi_records()
    for row in records:
        row["answer"] = [OPTIONS[letter] for letter in row["answer"]]
    assert score(records)[0]["multi_f1"] == pytest.approx(100 * (10 / 3) / 6)


def test_multi_binary_decisions_are_combined_per_question() -> None:
    """Question x: gold {A, C}; yes to A and C, no to B and D -> exact.

    Question y: gold {B}; yes to A and B -> wrong, P 1/2 R 1 -> F1 2/3.
    k1: 0 %, k2: 100 %, F1 (1 + 2/3) / 2 = 83.33 %.
    """
    decisions = {
        "x": (["A", "C"], {"A": "Yes", "B": "No", "C": "yes.", "D": "No, it is not"}),
        "y": (["B"], {"A": "Yes", "B": "Yes", "C": "No", "D": "no"}),
    }
    records = [
        record(question, gold, reply, setup="multi", answer_format="binary", option=letter)
        for question, (gold, replies) in decisions.items()
        for letter, reply in replies.items()
    ]
    metrics = score(records)[0]
    assert metrics["multi_binary_exact_k2"] == 100.0
    assert metrics["multi_binary_exact_k1"] == 0.0
    assert metrics["multi_binary_f1"] == pytest.approx(100 * (1 + 2 / 3) / 2)
    # the headline multi keys are the standard setup's only
    assert "multi_f1" not in metrics


def test_all_and_none_of_the_above_options() -> None:
    """+all+none: E = all of the above, F = none of the above.

    q1 gold ABCD, pred "E" -> all -> exact; q2 gold {}, pred "F" -> none -> exact;
    q3 gold {A}, pred "A, F" -> contradictory -> wrong, F1 0; q4 gold {}, pred "NONE" -> exact.
    k0 2/2 = 100, k1 0/1 = 0, k4 1/1 = 100; F1 (1 + 1 + 0 + 1) / 4 = 75 %.
    """
    rows = [("q1", ["A", "B", "C", "D"], "E"), ("q2", [], "F"), ("q3", ["A"], "A, F"), ("q4", [], "NONE")]
    records = [
        record(question, gold, prediction, setup="multi", extra_options="all_none")
        for question, gold, prediction in rows
    ]
    metrics = score(records)[0]
    assert metrics["multi_plus_all_none_exact_k0"] == 100.0
    assert metrics["multi_plus_all_none_exact_k1"] == 0.0
    assert metrics["multi_plus_all_none_exact_k4"] == 100.0
    assert metrics["multi_plus_all_none_f1"] == 75.0
    assert metrics["multi_contradictory"] == 1


def test_inverse_format_is_right_only_for_the_complement() -> None:
    records = [
        record("q1", ["B"], "A, C, D", answer_format="inv"),
        record("q2", ["B"], "A, B, D", answer_format="inv"),
        record("q3", ["B"], "C, D", answer_format="inv"),
        record("q4", ["B"], "", answer_format="inv"),
    ]
    metrics = score(records)[0]
    assert metrics["single_inv_p1_accuracy"] == 25.0
    assert metrics["unparsed"] == 1
    assert score_record(records[0]).predicted == frozenset("B")


def test_single_with_several_letters_is_wrong_and_counted() -> None:
    metrics = score([record("q1", ["A"], "A, B"), record("q2", ["A"], "A")])[0]
    assert metrics["single_accuracy"] == 50.0
    assert metrics["single_multiple_letters"] == 1


def test_summary_table_rows_and_columns() -> None:
    records = single_grid() + multi_records()
    table = summary_table(score(records)[0])
    assert set(table) == {"count", "order", "all"}
    assert table["all"]["single_acc"] == 75.0
    assert table["count"]["single_acc"] == pytest.approx(250 / 3)
    assert table["all"]["multi_k0"] == 50.0
    text = format_table(table)
    assert text.splitlines()[0].startswith("| category | single_acc | prompt_std")
    assert "| all | 75.0 |" in text


def test_metric_names_are_suffix_free() -> None:
    """The host matches group metrics by substring ("X,none" in "Y,none"): no key may end with another key."""
    records = single_grid() + multi_records()
    records += [record(f"v{n}", ["A"], "A", setup="single_var", instance="i1") for n in range(3)]
    keys = list(score(records)[0])
    for key in keys:
        for other in keys:
            assert key == other or not other.endswith(key), (key, other)


def test_registered_scorer_is_this_function() -> None:
    assert get_benchmark("dare").loaded.score is score


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"category": "astronomy"}, "category"),
        ({"setup": "pairs"}, "setup"),
        ({"format": "xml"}, "format"),
        ({"prompt": 7}, "prompt"),
        ({"answer": ["seven"]}, "answer"),
        ({"answer": ["A", "B"]}, "answer"),
        ({"answer": 5}, "answer"),
        ({"prediction": 5}, "prediction"),
    ],
)
def test_bad_records_name_the_record_and_the_field(change: dict, field: str) -> None:
    records = [record("q1", ["A"], "A"), {**record("q2", ["A"], "A"), **change}]
    with pytest.raises(RecordError) as caught:
        score(records)[0]
    assert caught.value.record_index == 1 and caught.value.field == field


def test_missing_fields_are_reported() -> None:
    for field in ("id", "category", "setup", "answer", "format", "prompt", "prediction", "A"):
        broken = record("q1", ["A"], "A")
        del broken[field]
        with pytest.raises(RecordError, match=f"record 0: field '{field}'"):
            score([broken])[0]
    broken = record("v1", ["A"], "A", setup="single_var")
    del broken["instance_id"]
    with pytest.raises(RecordError, match="instance_id"):
        score([broken])[0]


def test_gold_letters_prefers_option_text_then_letter() -> None:
    row = record("q", ["two"], "B")
    assert gold_letters(row, 0) == frozenset("B")
    assert gold_letters({**row, "answer": ["c"]}, 0) == frozenset("C")
    assert gold_letters({**row, "answer": [" Two "]}, 0) == frozenset("B")


def test_unanswered_multi_questions_score_zero_even_with_an_empty_gold_set() -> None:
    """k=0 question, prediction unparsable: exact 0 and F1 0 (not the F1 = 1 of a correct NONE).

    Binary: k=0 question where option C's reply is unparsable: the question is unanswered -> F1 0.
    """
    metrics = score([record("z1", [], "I am not sure", setup="multi")])[0]
    assert (metrics["multi_exact_k0"], metrics["multi_f1"]) == (0.0, 0.0)
    replies = {"A": "no", "B": "no", "C": "hmm", "D": "no"}
    binary = [
        record("z2", [], reply, setup="multi", answer_format="binary", option=letter)
        for letter, reply in replies.items()
    ]
    metrics = score(binary)[0]
    assert (metrics["multi_binary_exact_k0"], metrics["multi_binary_f1"]) == (0.0, 0.0)
    # contradictory "+none" answers are unanswered too
    metrics = score([record("z3", [], "A, E", setup="multi", extra_options="none")])[0]
    assert (metrics["multi_plus_none_f1"], metrics["multi_contradictory"]) == (0.0, 1)


# --- review regressions -----------------------------------------------------------------------------


def test_drop_compares_single_correct_on_the_categories_that_have_variations() -> None:
    """VCR has no option variations; its single-correct questions must not enter the drop.

    Single gen p1: q1 count right, q2 vcr wrong, q3 vcr wrong, q4 count right -> all 2/4 = 50 %, count 2/2.
    Variations gen p1 (count only): i1 right x3, i2 right, wrong, right -> worst case 1/2 = 50 %.
    Drop on the same categories (count): 100 - 50 = 50 points. Mixing in VCR gave 50 - 50 = 0.
    """
    records = [
        record("q1", ["A"], "A"),
        record("q2", ["B"], "C", category="vcr"),
        record("q3", ["C"], "D", category="vcr"),
        record("q4", ["D"], "D"),
    ]
    for instance, results in {"i1": (1, 1, 1), "i2": (1, 0, 1)}.items():
        records += [
            record(f"{instance}-{n}", ["B"], "B" if right else "C", setup="single_var", instance=instance)
            for n, right in enumerate(results)
        ]
    metrics = score(records)[0]
    assert metrics["single_accuracy"] == 50.0  # the single-correct headline keeps every category
    assert metrics["single_var_accuracy"] == 50.0
    assert metrics["single_var_gen_p1_drop"] == 50.0
    assert metrics["single_var_drop"] == 50.0
    assert metrics["single_var_drop__count"] == 50.0


def test_worst_case_instances_are_told_apart_by_category() -> None:
    """instance_id 7 in count (right x3) and instance_id 7 in order (right, wrong, right) are two instances.

    Worst case: count 1/1, order 0/1 -> all 1/2 = 50 % (merging them into one instance gave 0 %).
    """
    records = [
        record(f"c{n}", ["A"], "A", setup="single_var", instance="7", category="count") for n in range(3)
    ]
    records += [
        record(f"o{n}", ["A"], "B" if n == 1 else "A", setup="single_var", instance="7", category="order")
        for n in range(3)
    ]
    metrics = score(records)[0]
    assert metrics["single_var_accuracy"] == 50.0
    assert metrics["single_var_instances"] == 2


def test_instances_with_missing_variants_are_counted() -> None:
    """i1 has all three variants (right), i2 only one (right): worst case over what is there = 2/2 = 100 %,
    and the one incomplete instance is reported (e.g. a --limit run cut it)."""
    records = [record(f"i1-{n}", ["A"], "A", setup="single_var", instance="i1") for n in range(3)]
    records.append(record("i2-0", ["A"], "A", setup="single_var", instance="i2"))
    metrics = score(records)[0]
    assert metrics["single_var_accuracy"] == 100.0
    assert metrics["single_var_incomplete_instances"] == 1


def test_score_leaves_test_split_records_out_as_the_harness_does(tmp_path, capsys) -> None:
    """A run's records file can hold test-split records (answers withheld, ``answer: []``): the harness
    exports them unscored ("exported", their unparsed outputs counted); `score` of the same file must give
    the same numbers, not refuse the file nor count a test record. Validation: q1 gold B, "B" right, q2
    gold A, "C" wrong: single_accuracy 1/2 = 50.0. Test: q3 "B" (parses), q4 "no idea" (unparsed):
    exported 2, unparsed 0 + 1 = 1."""
    from argparse import Namespace

    from lmms_eval_tasks.cli import main
    from lmms_eval_tasks.tasks.dare import BENCHMARK
    from lmms_eval_tasks.tasks.dare.hooks import HOOKS

    task = "dare_sample_single_gen_p1"
    validation = [
        {**record, "task": task, "split": "validation"} for record in BENCHMARK.record_schema.example
    ]
    withheld = {**validation[0], "split": "test", "answer": []}
    test = [{**withheld, "id": "q3", "prediction": "B"}, {**withheld, "id": "q4", "prediction": "no idea"}]
    records = validation + test
    (tmp_path / "out").mkdir()
    args = Namespace(model="crafted", model_args="", limit=None, seed=None, output_path=str(tmp_path / "out"))
    _metrics, report_path = score_and_report(HOOKS, records, task, args, folder=tmp_path / "out")
    harness = json.loads(report_path.read_text(encoding="utf-8"))["metrics"]  # NaN written as null
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    assert main(["score", "dare", str(path)]) == 0, capsys.readouterr().err
    scored = json.loads(capsys.readouterr().out)
    scored.pop("uncertainty", None)
    assert (scored["single_accuracy"], scored["exported"], scored["unparsed"]) == (50.0, 2, 1)
    assert scored == harness
