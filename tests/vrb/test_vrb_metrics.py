"""VRB scoring: VQA accuracy (normalisation, leave-one-out), sub-metrics, min-max scaling, softmax, VRE.

Every expected number is computed by hand in the comments next to it.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.tasks.vrb.scoring import (
    leave_one_out_accuracy,
    min_max_scale,
    normalize_answer,
    resolve_weights,
    robustness,
    score,
    softmax_weights,
    sub_metrics,
    vqa_accuracy,
)

# A curve with E = [.2, .3, .4, .4, .5, .6] (accuracy = 1 - E).
FRAGILE = [0.8, 0.7, 0.6, 0.6, 0.5, 0.4]
FLAT = [0.8] * 6
# E = [.2, .25, .3, .3, .35, .4]
MIDDLE = [0.8, 0.75, 0.7, 0.7, 0.65, 0.6]


# --------------------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("two", "2"),  # number words become digits
        ("Two.", "2"),  # lower-cased, final period dropped
        ("none", "0"),
        ("yes.", "yes"),
        ("Yes", "yes"),
        ("the dog", "dog"),  # articles dropped
        ("A red ball", "red ball"),
        ("x-ray", "x ray"),  # punctuation without a neighbouring space becomes a space
        ("dog, cat", "dog cat"),  # ", " has a space: removed instead
        ("1,000", "1000"),  # a comma between digits: every punctuation mark removed
        ("2.5", "2.5"),  # a period before a digit stays
        ("dont", "don't"),  # contractions
        ("  yes\n", "yes"),
    ],
)
def test_normalize_answer_edge_cases(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_normalisation_matches_the_host_processor_on_many_strings() -> None:
    from lmms_eval.tasks._task_utils.vqa_eval_metric import EvalAIAnswerProcessor

    host = EvalAIAnswerProcessor()
    rng = random.Random(0)
    pieces = [
        "the",
        "A",
        "an",
        "two",
        "Ten",
        "none",
        "dont",
        "Im",
        "youre",
        "x-ray",
        "1,000",
        "2.5",
        "yes.",
        "(a)",
        "dog's",
        "cats!",
        "what?",
        "a/b",
        "s.t.",
        "1.",
        "...",
        "'twas",
        "twas",
        "ow's'at",
        "@home",
    ]
    for _ in range(2000):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
        if rng.random() < 0.3:
            text = text.replace(" ", rng.choice([",", ", ", "-", " - ", ";"]))
        assert normalize_answer(text) == host.process_digit_article(host.process_punctuation(text)), text


# ------------------------------------------------------------------------------------------- accuracy


def test_leave_one_out_average() -> None:
    # 3 of 10 annotators match. Leaving out a matching one leaves 2 matches: min(2/3, 1) = 2/3 (3 times);
    # leaving out another leaves 3: min(3/3, 1) = 1 (7 times). Mean = (3 * 2/3 + 7 * 1) / 10 = 0.9.
    assert leave_one_out_accuracy([True] * 3 + [False] * 7) == pytest.approx(0.9)
    # 1 match: (1 * 0 + 9 * 1/3) / 10 = 0.3
    assert leave_one_out_accuracy([True] + [False] * 9) == pytest.approx(0.3)
    # 2 matches: (2 * 1/3 + 8 * 2/3) / 10 = 0.6
    assert leave_one_out_accuracy([True] * 2 + [False] * 8) == pytest.approx(0.6)
    assert leave_one_out_accuracy([True] * 4 + [False] * 6) == 1.0  # 3 or 4 remain: capped at 1
    assert leave_one_out_accuracy([False] * 10) == 0.0


def test_vqa_accuracy_normalises_both_sides() -> None:
    assert vqa_accuracy("two", ["2"] * 10) == 1.0
    assert vqa_accuracy("2", ["two"] * 3 + ["3"] * 7) == pytest.approx(0.9)
    assert vqa_accuracy("yes.", ["yes"] * 10) == 1.0
    assert vqa_accuracy("The dog", ["dog"] * 2 + ["cat"] * 8) == pytest.approx(0.6)
    assert vqa_accuracy("red", ["blue"] * 10) == 0.0


def test_official_protocol_is_case_sensitive_exact_match_on_multiple_choice_answer() -> None:
    answers = ["yes"] * 10
    assert vqa_accuracy("yes", answers, "yes", protocol="official") == 1.0
    assert vqa_accuracy("Yes", answers, "yes", protocol="official") == 0.0
    assert vqa_accuracy("yes.", answers, "yes", protocol="official") == 0.0
    assert vqa_accuracy(" yes\n", answers, "yes", protocol="official") == 1.0  # surrounding whitespace only
    # exact match ignores the other annotators: 3 say "2" but the consensus answer is "3"
    assert vqa_accuracy("2", ["2"] * 3 + ["3"] * 7, "3", protocol="official") == 0.0


def test_vqa_api_protocol_normalises_only_when_annotators_disagree() -> None:
    assert vqa_accuracy("yes.", ["yes"] * 10, protocol="vqa_api") == 0.0  # unanimous: raw comparison
    assert vqa_accuracy("yes.", ["yes"] * 9 + ["no"], protocol="vqa_api") == 1.0  # disagreement: normalised
    assert vqa_accuracy("yes.", ["yes"] * 10, protocol="paper") == 1.0


def test_accuracy_equals_the_hosts_vqav2_scoring_on_the_same_predictions() -> None:
    from lmms_eval.tasks.vqav2.utils import vqav2_process_results

    rng = random.Random(1)
    vocabulary = [
        "yes",
        "no",
        "2",
        "two",
        "Two.",
        "the dog",
        "dog",
        "red",
        "Red!",
        "x-ray",
        "1,000",
        "1000",
        "tennis racket",
        "a tennis racket",
        "dont know",
        "don't know",
        "2.5",
        "none",
        "0",
    ]
    records, host_total = [], 0.0
    for question in range(400):
        answers = [rng.choice(vocabulary[: rng.randint(2, len(vocabulary))]) for _ in range(10)]
        prediction = rng.choice(vocabulary) + rng.choice(["", ".", " ", "\n"])
        doc = {
            "question_id": question,
            "answers": [{"answer": a, "answer_id": i + 1} for i, a in enumerate(answers)],
        }
        host_total += vqav2_process_results(doc, [prediction])["exact_match"]
        records.append(
            {
                "question_id": question,
                "answers": answers,
                "multiple_choice_answer": answers[0],
                "question_type": "what",
                "answer_type": "other",
                "corruption": "clean",
                "severity": 0,
                "prediction": prediction,
            }
        )
    assert score(records)[0]["accuracy"] == pytest.approx(host_total / 400, abs=1e-12)


# ----------------------------------------------------------------------------------------- sub-metrics


def test_sub_metrics_by_hand() -> None:
    values = {key: float(value) for key, value in sub_metrics(np.array(FRAGILE)).items()}
    # E = [.2, .3, .4, .4, .5, .6]
    assert values["first_drop"] == pytest.approx(0.5)  # (.3 - .2) / .2
    assert values["range_of_error"] == pytest.approx(2.0)  # (.6 - .2) / .2
    # slope: mean E = .4; sum (l - 2.5)(E - .4) = 2.5*.2 + 1.5*.1 + 0 + 0 + 1.5*.1 + 2.5*.2 = 1.3; / 17.5
    assert values["error_rate"] == pytest.approx(1.3 / 17.5)
    assert values["average_error"] == pytest.approx(0.4)  # clean level included
    assert values["average_difference"] == pytest.approx(0.24)  # (.1 + .2 + .2 + .3 + .4) / 5
    assert values["accuracy_average"] == pytest.approx(0.6)
    assert values["relative_accuracy_drop"] == pytest.approx(0.25)  # (.8 - .6) / .8


def test_error_rate_is_the_least_squares_slope() -> None:
    curve = np.array([0.9, 0.82, 0.8, 0.61, 0.6, 0.33])
    slope = np.polyfit(np.arange(6), 1 - curve, 1)[0]
    assert float(sub_metrics(curve)["error_rate"]) == pytest.approx(slope)


def test_zero_error_gives_undefined_ratios_not_a_crash() -> None:
    values = sub_metrics(np.array([1.0, 0.9, 0.9, 0.8, 0.8, 0.7]))
    assert math.isnan(values["first_drop"]) and math.isnan(values["range_of_error"])  # E_0 = 0, min E = 0
    assert float(values["average_difference"]) == pytest.approx(0.18)  # (.1 + .1 + .2 + .2 + .3) / 5


def test_min_max_scaling_by_hand() -> None:
    scaled, note = min_max_scale(np.array([2.0, 4.0, 3.0, 6.0]))
    assert note is None
    assert scaled.tolist() == pytest.approx([0.0, 0.5, 0.25, 1.0])  # (x - 2) / (6 - 2)
    constant, note = min_max_scale(np.array([0.3, 0.3]))
    assert constant.tolist() == [0.0, 0.0] and "constant" in note


def test_softmax_weights_by_hand() -> None:
    assert softmax_weights([0, 0, 0, 0, 0]).tolist() == pytest.approx([0.2] * 5)
    # e^{ln 6} = 6 against four e^0 = 1: 6/10 and 1/10 each (the paper's 0.6 / 0.1 example)
    assert softmax_weights([math.log(6), 0, 0, 0, 0]).tolist() == pytest.approx([0.6, 0.1, 0.1, 0.1, 0.1])
    assert resolve_weights().tolist() == pytest.approx([0.2] * 5)
    with pytest.raises(ValueError, match="sum to 1"):
        resolve_weights(weights=[0.5, 0.5, 0.5, 0, 0])
    with pytest.raises(ValueError, match="not both"):
        resolve_weights(weights=[0.2] * 5, preferences=[0] * 5)


def test_pool_vre_means_over_corruptions_and_models() -> None:
    # Cells: A/c1 flat (all sub-metrics minimal), A/c2 fragile (all maximal), B/c1 = B/c2 middle (exactly half
    # way for every sub-metric: F .25/.5, R 1/2, rho .65/1.3, mu (.3-.2)/(.4-.2), Delta .12/.24).
    result = robustness({"A": {"c1": FLAT, "c2": FRAGILE}, "B": {"c1": MIDDLE, "c2": MIDDLE}})
    assert result["cells"]["B"]["c1"]["scaled"] == pytest.approx(
        dict.fromkeys(result["pool"]["weights"], 0.5)
    )
    assert result["models"]["A"]["vre"] == pytest.approx(0.5)  # mean(0, 1)
    assert result["models"]["B"]["vre"] == pytest.approx(0.5)
    assert result["corruptions"]["c1"]["vre"] == pytest.approx(0.25)  # mean(0, .5)
    assert result["corruptions"]["c2"]["vre"] == pytest.approx(0.75)  # mean(1, .5)
    # raw (unscaled) means: A's first drop = mean(0, .5); accuracy average = mean(.8, .6)
    assert result["models"]["A"]["first_drop"] == pytest.approx(0.25)
    assert result["models"]["A"]["accuracy_average"] == pytest.approx(0.7)
    assert result["models"]["A"]["relative_accuracy_drop"] == pytest.approx((0.8 - 0.7) / 0.8)
    # corruption c2: sum_v (A_v0 - A_vc) / sum_v A_v0 = ((.8 - .6) + (.8 - .7)) / 1.6
    assert result["corruptions"]["c2"]["relative_accuracy_drop"] == pytest.approx(0.3 / 1.6)


def test_pool_vre_ordering_depends_on_the_weights() -> None:
    # Z flat: every sub-metric minimal (mu = .2). P: E = [.2, .4, .4, .4, .4, .4]: F 1, R 1, rho .5/17.5,
    # mu .3667, Delta .2. Q: E = [.2, .2, .3, .4, .5, .6]: F 0, R 2, rho 1.5/17.5, mu .3667, Delta .2.
    pool = {
        "Z": {"c": FLAT},
        "P": {"c": [0.8, 0.6, 0.6, 0.6, 0.6, 0.6]},
        "Q": {"c": [0.8, 0.8, 0.7, 0.6, 0.5, 0.4]},
    }
    # Scaled: P = (1, .5, 1/3, 1, 1), Q = (0, 1, 1, 1, 1), Z = 0.
    equal = robustness(pool)["models"]
    assert equal["P"]["vre"] == pytest.approx(0.2 * (1 + 0.5 + 1 / 3 + 1 + 1))  # 0.7667
    assert equal["Q"]["vre"] == pytest.approx(0.8)
    assert equal["Z"]["vre"] == 0.0
    assert equal["Z"]["vre"] < equal["P"]["vre"] < equal["Q"]["vre"]
    first_drop_heavy = robustness(pool, preferences=[math.log(6), 0, 0, 0, 0])["models"]
    assert first_drop_heavy["P"]["vre"] == pytest.approx(0.6 + 0.1 * (0.5 + 1 / 3 + 1 + 1))  # 0.8833
    assert first_drop_heavy["Q"]["vre"] == pytest.approx(0.4)
    assert first_drop_heavy["Q"]["vre"] < first_drop_heavy["P"]["vre"]
    same = robustness(pool, weights=[0.6, 0.1, 0.1, 0.1, 0.1])["models"]
    assert same["P"]["vre"] == pytest.approx(first_drop_heavy["P"]["vre"])


def test_pool_of_one_cell_has_raw_sub_metrics_and_no_vre() -> None:
    result = robustness({"only": {"c": FRAGILE}})
    model = result["models"]["only"]
    assert model["first_drop"] == pytest.approx(0.5) and model["average_difference"] == pytest.approx(0.24)
    assert model["vre"] is None and result["corruptions"]["c"]["vre"] is None
    assert any("at least two" in note for note in result["notes"])


def test_pool_rejects_models_with_different_corruptions() -> None:
    with pytest.raises(ValueError, match="missing"):
        robustness({"A": {"c1": FLAT, "c2": FLAT}, "B": {"c1": FLAT}})


# -------------------------------------------------------------------------------------------- records


def _record(qid: int, corruption: str, severity: int, prediction: str, **extra) -> dict:
    record = {
        "question_id": qid,
        "answers": ["2"] * 10 if qid == 1 else ["yes"] * 10,
        "multiple_choice_answer": "2" if qid == 1 else "yes",
        "question_type": "how many" if qid == 1 else "is this",
        "answer_type": "number" if qid == 1 else "yes/no",
        "corruption": corruption,
        "severity": severity,
        "prediction": prediction,
    }
    record.update(extra)
    return record


def test_score_records_per_level_and_single_model_sub_metrics() -> None:
    # Two questions per level; q1 right at levels 0..2, q2 right at levels 0, 1, 3, 5:
    # accuracies [1, 1, .5, .5, 0, .5] -> E = [0, 0, .5, .5, 1, .5]
    right = {1: {0, 1, 2}, 2: {0, 1, 3, 5}}
    records = []
    for level in range(6):
        corruption = "clean" if level == 0 else "snow"
        for qid in (1, 2):
            good = "two" if qid == 1 else "Yes."
            records.append(_record(qid, corruption, level, good if level in right[qid] else "no idea"))
    metrics, details = score(records)
    assert details["accuracy_by_level"] == {
        "clean": 1.0,
        "snow_s1": 1.0,
        "snow_s2": 0.5,
        "snow_s3": 0.5,
        "snow_s4": 0.0,
        "snow_s5": 0.5,
    }
    assert metrics["accuracy"] == pytest.approx(3.5 / 6)  # 7 right of 12
    assert metrics["accuracy_clean"] == 1.0
    assert math.isnan(metrics["first_drop"])  # E_0 = 0: undefined, reported as NaN (null in JSON)
    assert metrics["average_error"] == pytest.approx(2.5 / 6)
    assert metrics["average_difference"] == pytest.approx(2.5 / 5)
    # slope: mean E = 2.5/6; sum (l - 2.5) E_l = -1.5*0 ... = -0.5*.5 + .5*.5 + 1.5*1 + 2.5*.5 = 2.75
    assert metrics["error_rate"] == pytest.approx(2.75 / 17.5)
    assert metrics["accuracy_average"] == pytest.approx(3.5 / 6)
    assert metrics["relative_accuracy_drop"] == pytest.approx(1 - 3.5 / 6)
    assert details["accuracy_by_question_type"] == {"how many": 0.5, "is this": pytest.approx(4 / 6)}
    assert details["accuracy_by_answer_type_and_level"]["number"]["snow_s2"] == 1.0
    assert details["incomplete_corruptions"] == {}
    assert math.isnan(metrics["vre"])  # one cell: no scaling possible


def test_score_records_lists_incomplete_corruptions() -> None:
    records = [_record(1, "clean", 0, "2"), _record(1, "fog", 3, "2")]
    metrics, details = score(records)
    assert details["incomplete_corruptions"] == {"fog": [1, 2, 4, 5]}
    assert math.isnan(metrics["error_rate"])
    assert details["accuracy_by_level"] == {"clean": 1.0, "fog_s3": 1.0}


def test_score_records_official_protocol() -> None:
    records = [_record(1, "clean", 0, "two"), _record(2, "clean", 0, "yes")]
    assert score(records, protocol="official")[0]["accuracy"] == 0.5  # "two" != "2"
    assert score(records)[0]["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"answers": "2"}, "answers"),
        ({"answers": []}, "answers"),
        ({"severity": 6}, "severity"),
        ({"severity": True}, "severity"),
        ({"corruption": "clean", "severity": 2}, "severity"),
        ({"question_type": None}, "question_type"),
        ({"prediction": 3}, "prediction"),
    ],
)
def test_bad_records_name_the_record_and_field(change: dict, field: str) -> None:
    records = [_record(1, "clean", 0, "2"), {**_record(2, "clean", 0, "yes"), **change}]
    with pytest.raises(RecordError) as raised:
        score(records)[0]
    assert raised.value.record_index == 1 and raised.value.field == field


def test_missing_field_and_duplicates_and_none_prediction() -> None:
    record = _record(1, "clean", 0, "2")
    del record["answer_type"]
    with pytest.raises(RecordError, match="answer_type"):
        score([record])[0]
    # duplicates are the record contract's (Benchmark.validate, before any scorer), not the scorer's
    vrb = get_benchmark("vrb")
    with pytest.raises(RecordError, match=r"record 1: field 'question_id': duplicate record"):
        vrb.validate([_record(1, "clean", 0, "2"), _record(1, "clean", 0, "2")])
    with pytest.raises(RecordError, match=r"record 1: field 'question_id': conflicting record"):
        vrb.validate([_record(1, "clean", 0, "2"), _record(1, "clean", 0, "3")])
    metrics = score([_record(1, "clean", 0, None), _record(2, "clean", 0, "yes")])[0]
    assert metrics["missing_predictions"] == 1 and metrics["accuracy"] == 0.5


def test_score_cli_prints_strict_json(tmp_path, capsys) -> None:
    import json

    from lmms_eval_tasks.cli import main

    path = tmp_path / "records.jsonl"
    records = [_record(1, "clean", 0, "2"), _record(2, "clean", 0, "no")]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert main(["score", "vrb", str(path), "--details"]) == 0  # the tables are details (one path)
    full = json.loads(capsys.readouterr().out)
    printed = full["metrics"]
    assert printed["accuracy"] == 0.5 and full["details"]["accuracy_by_level"] == {"clean": 0.5}
    assert printed["first_drop"] is None  # no corrupted level: null, not NaN
    assert main(["score", "vrb", str(path), "-o", "protocol=official"]) == 0
    assert json.loads(capsys.readouterr().out)["protocol"] == "official"
