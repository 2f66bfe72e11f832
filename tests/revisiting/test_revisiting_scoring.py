"""TDIUC, TallyQA and DVQA metrics against numbers computed by hand (arithmetic in the comments), with the
official-protocol differences, and TDIUC's synonym matching on the real WordNet."""

from __future__ import annotations

import math

import pytest

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.tasks.dvqa import scoring as dvqa
from lmms_eval_tasks.tasks.revisiting.scoring import cardinal_words, official_digits_to_words
from lmms_eval_tasks.tasks.tallyqa import scoring as tallyqa
from lmms_eval_tasks.tasks.tdiuc import scoring as tdiuc

# --------------------------------------------------------------------------------------------------------
# Shared: num2words-compatible cardinals
# --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (0, "zero"),
        (7, "seven"),
        (13, "thirteen"),
        (20, "twenty"),
        (21, "twenty-one"),
        (99, "ninety-nine"),
        (100, "one hundred"),
        (105, "one hundred and five"),
        (110, "one hundred and ten"),
        (342, "three hundred and forty-two"),
        (1000, "one thousand"),
        (1001, "one thousand and one"),
        (1100, "one thousand, one hundred"),
        (1234, "one thousand, two hundred and thirty-four"),
        (250000, "two hundred and fifty thousand"),
        (1000005, "one million and five"),
        (2500000, "two million, five hundred thousand"),
    ],
)
def test_cardinal_words_spell_numbers_as_num2words(number: int, words: str) -> None:
    assert cardinal_words(number) == words


def test_official_digit_rule() -> None:
    assert official_digits_to_words("05") == "five"  # num2words("05") reads the value 5
    # DVQA script: 10 + superscript digits = a power of ten; TDIUC's script would crash on it (left as is)
    assert official_digits_to_words("10²", powers_of_ten=True) == "one hundred"
    assert official_digits_to_words("10²") == "10²"
    assert official_digits_to_words("²", powers_of_ten=True) == "²"  # the scripts crash; left unchanged
    assert official_digits_to_words("0.5") == "0.5"


# --------------------------------------------------------------------------------------------------------
# TDIUC
# --------------------------------------------------------------------------------------------------------


def tdiuc_record(question_id: int, question_type: str, label: str, prediction: str | None) -> dict:
    return {
        "question_id": question_id,
        "question_type": question_type,
        "labeled_answer": label,
        "prediction": prediction,
    }


@pytest.mark.parametrize(
    ("prediction", "label", "default", "official"),
    [
        ("phone", "telephone", True, True),  # share telephone.n.01
        ("Telephone", "phone", True, True),
        ("dogs", "dog", True, True),  # plural: morphy maps "dogs" to dog
        ("bikes", "bicycle", True, True),
        ("sofa", "couch", True, True),
        ("cat", "dog", False, False),  # non-synonyms
        ("red", "blue", False, False),
        ("yes", "no", False, False),
        ("2", "two", True, True),  # digits spelled out
        ("deuce", "2", True, True),  # "2" -> "two" shares two.n.01 with "deuce"
        ("teddy bear", "teddy", True, False),  # multi-word: only the underscore form reaches WordNet
        ("cell phone", "mobile phone", True, False),
        ("teddy bear", "teddybear", True, True),  # spaces removed before the exact comparison
        ("does not apply", "doesnotapply", True, True),
        ("Dog.", "dog", False, False),  # punctuation is not removed (as in the official script)
        ("dog\n", "dog", True, True),  # surrounding whitespace stripped, as the authors' inference code does
        ("", "dog", False, False),
    ],
)
def test_tdiuc_matching_on_real_wordnet(prediction: str, label: str, default: bool, official: bool) -> None:
    assert tdiuc.is_correct(prediction, label) is default
    assert tdiuc.is_correct(prediction, label, "official") is official


def test_tdiuc_skips_lookups_no_wordnet_lemma_can_match() -> None:
    lemmas = tdiuc.wordnet().all_lemma_names()
    assert max(len(lemma) for lemma in lemmas) + 4 < tdiuc.MAX_LOOKUP_LENGTH  # morphy strips <= 4 chars
    assert tdiuc.synset_names("dog " * 40) == frozenset()


def tdiuc_records() -> list[dict]:
    """9 questions in 4 types.

    color: labels red, red, red, blue; predictions red, red, green, green -> 2/4 = 50 %;
           per answer: red 2/3 = 66.67 %, blue 0/1 = 0 % -> normalized 33.33 %
    counting: "2" <- "two", "3" <- "3" -> 2/2 = 100 % (normalized 100 %)
    absurd: doesnotapply <- "does not apply" (right), "yes" (wrong) -> 50 % (normalized 50 %)
    object_recognition: telephone <- "phone" (synonym) -> 100 %
    """
    return [
        tdiuc_record(1, "color", "red", "red"),
        tdiuc_record(2, "color", "red", "Red"),
        tdiuc_record(3, "color", "red", "green"),
        tdiuc_record(4, "color", "blue", "green"),
        tdiuc_record(5, "counting", "2", "two"),
        tdiuc_record(6, "counting", "3", "3"),
        tdiuc_record(7, "absurd", "doesnotapply", "does not apply"),
        tdiuc_record(8, "absurd", "doesnotapply", "yes"),
        tdiuc_record(9, "object_recognition", "telephone", "phone"),
    ]


def test_tdiuc_metrics_by_hand() -> None:
    metrics = tdiuc.score(tdiuc_records())[0]
    assert metrics["accuracy_color"] == pytest.approx(50.0)
    assert metrics["accuracy_counting"] == pytest.approx(100.0)
    assert metrics["accuracy_absurd"] == pytest.approx(50.0)
    assert metrics["accuracy_object_recognition"] == pytest.approx(100.0)
    assert "accuracy_sport_recognition" not in metrics  # absent types are not reported
    # micro: (2 + 2 + 1 + 1) / 9 = 66.67
    assert metrics["micro_accuracy"] == pytest.approx(600 / 9)
    # arithmetic MPT over the 4 types present: (50 + 100 + 50 + 100) / 4 = 75
    assert metrics["macro_accuracy"] == pytest.approx(75.0)
    # harmonic MPT: 4 / (1/50 + 1/100 + 1/50 + 1/100) = 4 / 0.06 = 66.67
    assert metrics["harmonic_mpt"] == pytest.approx(4 / 0.06)
    # normalized: color 33.33, counting 100, absurd 50, object_recognition 100
    assert metrics["normalized_accuracy_color"] == pytest.approx(100 / 3)
    # arithmetic: (33.33 + 100 + 50 + 100) / 4 = 70.83; harmonic: 4 / (0.03 + 0.01 + 0.02 + 0.01) = 57.14
    assert metrics["normalized_arithmetic_mpt"] == pytest.approx((100 / 3 + 250) / 4)
    assert metrics["normalized_harmonic_mpt"] == pytest.approx(4 / 0.07)
    assert metrics["questions"] == 9 and metrics["question_types"] == 4


def test_tdiuc_official_protocol_divides_macro_by_twelve() -> None:
    metrics = tdiuc.score(tdiuc_records(), protocol="official")[0]
    # the script sums the per-type accuracies and divides by 12: (50 + 100 + 50 + 100) / 12 = 25
    assert metrics["macro_accuracy"] == pytest.approx(25.0)
    assert metrics["micro_accuracy"] == pytest.approx(600 / 9)


def test_tdiuc_harmonic_is_zero_when_a_type_scores_zero() -> None:
    records = [tdiuc_record(1, "color", "red", "blue"), tdiuc_record(2, "counting", "2", "2")]
    assert tdiuc.score(records)[0]["harmonic_mpt"] == 0.0


def test_tdiuc_bad_records() -> None:
    with pytest.raises(
        RecordError, match="record 1: field 'question_type': unknown TDIUC question type 'colour'"
    ):
        tdiuc.score([tdiuc_record(1, "color", "red", "red"), tdiuc_record(2, "colour", "red", "red")])[0]
    with pytest.raises(RecordError, match="record 0: field 'labeled_answer': missing"):
        tdiuc.score([{"question_id": 1, "question_type": "color", "prediction": "red"}])[0]
    with pytest.raises(ValueError, match="protocol"):
        tdiuc.score(tdiuc_records(), protocol="paper")[0]


def test_tdiuc_per_question() -> None:
    correct = tdiuc.per_question_correct(tdiuc_records())
    assert [correct[str(i)] for i in range(1, 10)] == [
        True,
        True,
        False,
        False,
        True,
        True,
        True,
        False,
        True,
    ]


def test_tdiuc_missing_wordnet_is_a_clear_error(monkeypatch) -> None:
    from lmms_eval_tasks.wordnet import WordNetMissing

    def broken(target=None, source=None):
        raise WordNetMissing(
            "WordNet is missing (...); fix: run `lmms-eval-tasks setup-wordnet` with network"
        )

    monkeypatch.setattr(tdiuc, "_wordnet", None)
    monkeypatch.setattr("lmms_eval_tasks.wordnet.ensure_wordnet", broken)
    tdiuc.synset_names.cache_clear()
    try:
        with pytest.raises(
            WordNetMissing, match="TDIUC scoring needs WordNet.*lmms-eval-tasks setup-wordnet"
        ):
            tdiuc.score([tdiuc_record(1, "color", "red", "crimson")])[0]
    finally:
        tdiuc.synset_names.cache_clear()


# --------------------------------------------------------------------------------------------------------
# TallyQA
# --------------------------------------------------------------------------------------------------------


def tally_record(question_id: int, answer: int, simple: bool, prediction: str) -> dict:
    return {"question_id": question_id, "answer": answer, "issimple": simple, "prediction": prediction}


@pytest.mark.parametrize(
    ("text", "default", "official"),
    [
        ("3", 3, 3),
        ("3.", 3, 3),
        ("4\n", 4, 4),  # stripped in both protocols (the authors' inference code strips answers)
        ("Four!", 4, None),
        (" Three ", 3, 3),
        ("fifteen", 15, 15),
        ("twenty", 20, None),  # beyond fifteen: the official word list stops at fifteen
        ("twenty-one", 21, None),
        ("one hundred and five", 105, None),
        ("none", 0, 0),
        ("No", 0, 0),
        ("zero", 0, 0),
        ("2.5", 2.5, 25),  # the official normaliser deletes every "."
        ("2.0", 2, 20),
        ("three dogs", None, None),
        ("many", None, None),
        ("", None, None),
    ],
)
def test_tallyqa_parsing(text: str, default, official) -> None:
    assert tallyqa.parse_count(text) == default
    assert tallyqa.parse_count(text, "official") == official


def tally_records() -> list[dict]:
    """simple: (answer, prediction) = (0, none) R, (1, 1) R, (2, three) W, (5, five) R, (4, 2.5) W,
    (3, many) U; complex: (16, 20) W, (7, seven) R.   R right, W wrong, U unparsed (wrong)."""
    return [
        tally_record(1, 0, True, "none"),
        tally_record(2, 1, True, "1"),
        tally_record(3, 2, True, "three"),
        tally_record(4, 5, True, "five"),
        tally_record(5, 4, True, "2.5"),
        tally_record(6, 3, True, "many"),
        tally_record(7, 16, False, "20"),
        tally_record(8, 7, False, "seven"),
    ]


def test_tallyqa_metrics_by_hand() -> None:
    metrics = tallyqa.score(tally_records())[0]
    # simple micro: 3 right of 6 = 50 %
    assert metrics["simple_micro_accuracy"] == pytest.approx(50.0)
    # buckets: 0 -> 1/1, 1 -> 1/1, 2 -> 0/1, 3 -> 0/1, 4+ (answers 5 and 4) -> 1/2: (100+100+0+0+50)/5 = 50
    assert metrics["simple_accuracy_bucket_4+"] == pytest.approx(50.0)
    assert metrics["simple_macro_accuracy"] == pytest.approx(50.0)
    # RMSE over the 5 parsed answers: squared errors 0, 0, (3-2)^2 = 1, 0, (2.5-4)^2 = 2.25
    # -> mean 3.25/5 = 0.65
    assert metrics["simple_rmse"] == pytest.approx(math.sqrt(0.65))
    assert metrics["simple_unparsed"] == 1
    # complex: 20 is clipped to 15: (15-16)^2 = 1, and 0 -> RMSE sqrt(1/2); micro 1/2; only bucket 4+ -> 50
    assert metrics["complex_rmse"] == pytest.approx(math.sqrt(0.5))
    assert metrics["complex_micro_accuracy"] == pytest.approx(50.0)
    assert metrics["complex_macro_accuracy"] == pytest.approx(50.0)
    # both splits: 4 of 8
    assert metrics["micro_accuracy"] == pytest.approx(50.0)
    assert metrics["simple_accuracy_count_5"] == 100.0 and metrics["simple_accuracy_count_4"] == 0.0
    assert "simple_mse" not in metrics


def test_tallyqa_official_reports_mse_not_rmse() -> None:
    metrics = tallyqa.score(tally_records(), protocol="official")[0]
    # "2.5" -> "25" -> 25, clipped to 15: (15-4)^2 = 121; squared errors 0, 0, 1, 0, 121 -> 122/5 = 24.4
    assert metrics["simple_mse"] == pytest.approx(24.4)
    assert "simple_rmse" not in metrics
    # the script's "RMSE" of the complex split is the MSE: (1 + 0) / 2 = 0.5 (true RMSE would be 0.7071)
    assert metrics["complex_mse"] == pytest.approx(0.5)
    assert metrics["simple_micro_accuracy"] == pytest.approx(50.0)


def test_tallyqa_rmse_clips_predictions_to_0_15() -> None:
    records = [tally_record(1, 2, True, "-3"), tally_record(2, 10, True, "99")]
    # clip(-3) = 0 -> (0-2)^2 = 4; clip(99) = 15 -> (15-10)^2 = 25; RMSE = sqrt(29/2)
    assert tallyqa.score(records)[0]["simple_rmse"] == pytest.approx(math.sqrt(14.5))


def test_tallyqa_bad_records() -> None:
    with pytest.raises(RecordError, match="record 0: field 'issimple': expected bool"):
        tallyqa.score([{"question_id": 1, "answer": 2, "issimple": "yes", "prediction": "2"}])[0]
    with pytest.raises(RecordError, match="record 0: field 'answer'"):
        tallyqa.score([tally_record(1, -1, True, "2")])[0]


def test_tallyqa_plot(tmp_path) -> None:
    metrics = tallyqa.score(tally_records())[0]
    table = tallyqa.accuracy_by_count(metrics)
    assert table["simple"] == {0: 100.0, 1: 100.0, 2: 0.0, 3: 0.0, 4: 0.0, 5: 100.0}
    assert table["complex"] == {7: 100.0, 16: 0.0}
    path = tallyqa.plot_accuracy_by_count(metrics, tmp_path / "by_count.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------------------------------------
# DVQA
# --------------------------------------------------------------------------------------------------------


def dvqa_record(question_id: int, template: str, answer: str, prediction: str) -> dict:
    return {"question_id": question_id, "template_id": template, "answer": answer, "prediction": prediction}


def dvqa_records() -> list[dict]:
    return [
        dvqa_record(1, "structure", "yes", "Yes"),
        dvqa_record(2, "structure", "3", "three"),
        dvqa_record(3, "data", "5", "0.5"),  # the decimal case: right only under the official "." removal
        dvqa_record(4, "data", "0.5", "0.5"),
        dvqa_record(5, "reasoning", "cold", "hot"),
        dvqa_record(6, "reasoning", "10", "10."),  # a trailing period is not a decimal point
        dvqa_record(7, "reasoning", "100", "10²"),  # the script reads 10 + superscript 2 as 100
    ]


def test_dvqa_metrics_by_hand() -> None:
    metrics = dvqa.score(dvqa_records())[0]
    # structure 2/2 = 100; data 1/2 = 50; reasoning 1/3 = 33.33; micro 4/7; macro (100 + 50 + 33.33) / 3
    assert metrics["accuracy_structure"] == pytest.approx(100.0)
    assert metrics["accuracy_data"] == pytest.approx(50.0)
    assert metrics["accuracy_reasoning"] == pytest.approx(100 / 3)
    assert metrics["micro_accuracy"] == pytest.approx(400 / 7)
    assert metrics["macro_accuracy"] == pytest.approx((100 + 50 + 100 / 3) / 3)


def test_dvqa_official_protocol_strips_decimal_points() -> None:
    metrics = dvqa.score(dvqa_records(), protocol="official")[0]
    # "0.5" -> "05" -> "five" == "5" -> "five": data 2/2; reasoning 2/3; micro 6/7; macro (100+100+66.67)/3
    assert metrics["accuracy_data"] == pytest.approx(100.0)
    assert metrics["accuracy_reasoning"] == pytest.approx(200 / 3)
    assert metrics["micro_accuracy"] == pytest.approx(600 / 7)
    assert metrics["macro_accuracy"] == pytest.approx((200 + 200 / 3) / 3)


def test_dvqa_normalisation() -> None:
    assert dvqa.normalize("0.5") == "0.5" and dvqa.normalize("0.5", "official") == "five"
    assert dvqa.normalize("1.25.") == "1.25"
    assert dvqa.normalize(".5") == ".5" and dvqa.normalize(".5", "official") == "five"
    assert dvqa.normalize("  Twenty One ") == "twentyone"
    assert dvqa.normalize("21") == "twenty-one"


def test_dvqa_bad_records() -> None:
    with pytest.raises(
        RecordError, match="record 0: field 'template_id': unknown DVQA template 'structural'"
    ):
        dvqa.score([dvqa_record(1, "structural", "yes", "yes")])[0]
    with pytest.raises(RecordError, match="record 0: field 'prediction': missing"):
        dvqa.score([{"question_id": 1, "template_id": "data", "answer": "5"}])[0]
