"""Independent audit of the "Revisiting MLLM Evaluation" scoring (TDIUC, TallyQA, DVQA), McNemar and slim
sampling against the spec, with hand-computed numbers (arithmetic in the comments)."""

from __future__ import annotations

import math
import random

import pytest

from lmms_eval_tasks.framework import comparison as compare
from lmms_eval_tasks.tasks.dvqa import scoring as dvqa
from lmms_eval_tasks.tasks.revisiting.slim import KINDS, group_quota, slim
from lmms_eval_tasks.tasks.tallyqa import scoring as tallyqa
from lmms_eval_tasks.tasks.tdiuc import scoring as tdiuc

# ---------------------------------------------------------------------------------------------------------
# TDIUC
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prediction", "label", "default", "official"),
    [
        ("phone", "telephone", True, True),  # spec's example: share telephone.n.01
        ("dogs", "dog", True, True),  # morphy: plural -> dog.n.01
        ("grey", "gray", True, True),  # same synset
        ("2", "two", True, True),  # digits -> number words, then exact
        ("Does not apply", "doesnotapply", True, True),  # absurd: spaces removed, lower-cased
        ("teddy bear", "teddy", True, False),  # multi-word: only the underscore form reaches WordNet
        ("teddy bears", "teddy bear", True, False),  # "teddybears" vs "teddybear": no synset without "_"
        ("cat", "dog", False, False),
        ("dog.", "dog", False, False),  # normalisation removes no punctuation
        ("yes", "doesnotapply", False, False),
    ],
)
def test_tdiuc_matching_rule(prediction: str, label: str, default: bool, official: bool) -> None:
    assert tdiuc.is_correct(prediction, label) is default
    assert tdiuc.is_correct(prediction, label, "official") is official


@pytest.mark.parametrize(("prediction", "label"), [("mice", "mouse"), ("geese", "goose"), ("women", "woman")])
def test_tdiuc_irregular_plurals_via_wordnet_exception_files(prediction: str, label: str) -> None:
    # morphy reads noun.exc: irregular plurals reach the lemma's synset (real WordNet, not a stub)
    assert tdiuc.is_correct(prediction, label)
    assert tdiuc.is_correct(prediction, label, "official")


def _tdiuc(question_type: str, label: str, prediction: str, n: list[int]) -> dict:
    n[0] += 1
    return {
        "question_id": n[0],
        "question_type": question_type,
        "labeled_answer": label,
        "prediction": prediction,
    }


def test_tdiuc_metrics_by_hand() -> None:
    n = [0]
    records = [
        # color: red 1/2, blue 1/1 -> 2/3 = 66.667; normalized (50 + 100) / 2 = 75
        _tdiuc("color", "red", "Red", n),
        _tdiuc("color", "red", "green", n),
        _tdiuc("color", "blue", "blue", n),
        # counting: "2"/"two" right, "3"/"4" wrong -> 50; normalized (100 + 0) / 2 = 50
        _tdiuc("counting", "2", "two", n),
        _tdiuc("counting", "3", "4", n),
        # absurd: 2 of 4 -> 50; one answer class -> normalized 50
        _tdiuc("absurd", "doesnotapply", "Does not apply", n),
        _tdiuc("absurd", "doesnotapply", "yes", n),
        _tdiuc("absurd", "doesnotapply", "doesnotapply", n),
        _tdiuc("absurd", "doesnotapply", "no", n),
    ]
    m = tdiuc.score(records)[0]
    assert m["accuracy_color"] == pytest.approx(200 / 3)
    assert m["accuracy_counting"] == pytest.approx(50.0)
    assert m["accuracy_absurd"] == pytest.approx(50.0)
    assert m["micro_accuracy"] == pytest.approx(500 / 9)  # 5 correct of 9 = 55.556
    assert m["macro_accuracy"] == pytest.approx((200 / 3 + 50 + 50) / 3)  # 55.556
    # harmonic: 3 / (1/66.667 + 1/50 + 1/50) = 3 / 0.055 = 54.545
    assert m["harmonic_mpt"] == pytest.approx(3 / (0.015 + 0.02 + 0.02))
    assert m["normalized_accuracy_color"] == pytest.approx(75.0)
    assert m["normalized_arithmetic_mpt"] == pytest.approx((75 + 50 + 50) / 3)  # 58.333
    assert m["normalized_harmonic_mpt"] == pytest.approx(3 / (1 / 75 + 1 / 50 + 1 / 50))  # 56.25
    official = tdiuc.score(records, protocol="official")[0]
    assert official["macro_accuracy"] == pytest.approx((200 / 3 + 50 + 50) / 12)  # script divides by 12


# ---------------------------------------------------------------------------------------------------------
# TallyQA
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "default", "official"),
    [
        ("3", 3, 3),
        ("3.", 3, 3),
        ("zero", 0, 0),
        ("None", 0, 0),
        ("No.", 0, 0),
        ("fifteen", 15, 15),
        ("sixteen", 16, None),  # beyond fifteen: default reads it, the script does not
        ("twenty-one", 21, None),
        ("2.5", 2.5, 25),  # see test_tallyqa_decimal_numeral_is_a_number_documented_deviation
        ("many", None, None),
        ("3 apples", None, None),
        ("", None, None),
    ],
)
def test_tallyqa_parse_count(text: str, default: float | None, official: float | None) -> None:
    assert tallyqa.parse_count(text) == default
    assert tallyqa.parse_count(text, "official") == official


def _tally(answer: int, prediction: str, simple: bool, n: list[int]) -> dict:
    n[0] += 1
    return {"question_id": n[0], "answer": answer, "prediction": prediction, "issimple": simple}


def test_tallyqa_metrics_by_hand() -> None:
    n = [0]
    records = [
        _tally(0, "none", True, n),  # 0 right, err 0
        _tally(1, "One.", True, n),  # 1 right, err 0
        _tally(2, "3", True, n),  # wrong, err 1
        _tally(5, "twenty", True, n),  # 20 -> clipped 15, wrong, err 100 (official: unparsed)
        _tally(4, "many", True, n),  # unparsed, wrong, no error term
        _tally(3, "no", True, n),  # 0, wrong, err 9
        _tally(12, "twelve", False, n),  # right, err 0
        _tally(16, "sixteen", False, n),  # right (16), but clipped to 15 -> err 1 (official: unparsed)
        _tally(7, "2.5", False, n),  # default 2.5 wrong err 20.25; official 25 -> min(25,15) err 64
    ]
    m = tallyqa.score(records)[0]
    assert m["simple_micro_accuracy"] == pytest.approx(200 / 6)  # 2 / 6
    # buckets 0:100, 1:100, 2:0, 3:0, 4+ (answers 5, 4): 0 -> 200 / 5 = 40
    assert m["simple_macro_accuracy"] == pytest.approx(40.0)
    assert m["simple_rmse"] == pytest.approx(math.sqrt((0 + 0 + 1 + 100 + 9) / 5))  # sqrt(22) = 4.690
    assert m["simple_unparsed"] == 1
    assert m["complex_micro_accuracy"] == pytest.approx(200 / 3)
    assert m["complex_macro_accuracy"] == pytest.approx(200 / 3)  # only bucket 4+
    assert m["complex_rmse"] == pytest.approx(math.sqrt((0 + 1 + 20.25) / 3))  # sqrt(7.0833) = 2.661
    assert m["micro_accuracy"] == pytest.approx(400 / 9)
    o = tallyqa.score(records, protocol="official")[0]
    assert o["simple_micro_accuracy"] == pytest.approx(200 / 6)
    assert o["simple_mse"] == pytest.approx((0 + 0 + 1 + 9) / 4)  # "twenty", "many" unparsed: 2.5
    assert o["complex_micro_accuracy"] == pytest.approx(100 / 3)
    assert o["complex_mse"] == pytest.approx((0 + 64) / 2)  # "sixteen" unparsed: 32
    assert "simple_rmse" not in o


def test_tallyqa_decimal_numeral_is_a_number_documented_deviation() -> None:
    # decided (spec, docs/revisiting.md "Differences"): a numeral with a decimal part is a number, a
    # documented deviation from the spec's "digits -> int": "3.0" is 3 (right), "2.5" is 2.5 (wrong, and
    # it enters the RMSE); nothing is unparsed
    records = [
        {"question_id": 1, "answer": 3, "prediction": "3.0", "issimple": True},  # 3.0 == 3: right, error 0
        {"question_id": 2, "answer": 2, "prediction": "2.5", "issimple": True},  # wrong, error 0.5^2 = 0.25
        {"question_id": 3, "answer": 2, "prediction": "4", "issimple": True},  # wrong, error (4 - 2)^2 = 4
    ]
    m = tallyqa.score(records)[0]
    assert m["simple_micro_accuracy"] == pytest.approx(100 / 3)  # 1 of 3
    assert m["simple_unparsed"] == 0
    assert m["simple_rmse"] == pytest.approx(math.sqrt((0 + 0.25 + 4) / 3))  # sqrt(1.4167) = 1.190
    # the official script deletes the ".": "3.0" -> 30 (clipped to 15: error 144), "2.5" -> 25 (error 169)
    o = tallyqa.score(records, protocol="official")[0]
    assert o["simple_micro_accuracy"] == 0.0
    assert o["simple_mse"] == pytest.approx((144 + 169 + 4) / 3)


def test_tallyqa_negative_prediction_clipped_to_zero() -> None:
    records = [{"question_id": 1, "answer": 2, "prediction": "-3", "issimple": True}]
    # clip(-3, 0, 15) = 0 -> error (0 - 2)^2 = 4 -> RMSE 2
    assert tallyqa.score(records)[0]["simple_rmse"] == pytest.approx(2.0)


# ---------------------------------------------------------------------------------------------------------
# DVQA
# ---------------------------------------------------------------------------------------------------------


def test_dvqa_metrics_by_hand() -> None:
    rows = [
        ("structure", "yes", "Yes"),  # right
        ("structure", "no", "yes"),  # wrong -> structure 50
        ("data", "5", "0.5"),  # default wrong (decimal kept); official right ("05" -> "five")
        ("data", "0.5", "0.5"),  # right
        ("data", "7", "7."),  # right: a final period is not a decimal point
        ("reasoning", "2", "two"),  # right -> reasoning 100
    ]
    records = [
        {"question_id": i, "template_id": t, "answer": a, "prediction": p} for i, (t, a, p) in enumerate(rows)
    ]
    m = dvqa.score(records)[0]
    assert m["accuracy_structure"] == pytest.approx(50.0)
    assert m["accuracy_data"] == pytest.approx(200 / 3)
    assert m["accuracy_reasoning"] == pytest.approx(100.0)
    assert m["micro_accuracy"] == pytest.approx(400 / 6)  # 4 / 6
    assert m["macro_accuracy"] == pytest.approx((50 + 200 / 3 + 100) / 3)  # 72.222
    o = dvqa.score(records, protocol="official")[0]
    assert o["accuracy_data"] == pytest.approx(100.0)
    assert o["micro_accuracy"] == pytest.approx(500 / 6)  # 5 / 6
    assert o["macro_accuracy"] == pytest.approx((50 + 100 + 100) / 3)


def test_dvqa_decimals_kept() -> None:
    assert not dvqa.is_correct("0.5", "5")
    assert not dvqa.is_correct("5", "0.5")
    assert dvqa.is_correct("0.5", "0.5")
    assert dvqa.is_correct("10.", "10")
    assert dvqa.is_correct("0.5", "5", "official")


# ---------------------------------------------------------------------------------------------------------
# McNemar (compare)
# ---------------------------------------------------------------------------------------------------------


def test_mcnemar_by_hand() -> None:
    # exact: n = 12 < 25, P(X <= 2) = (1 + 12 + 66) / 4096 -> p = 158 / 4096 = 0.03857
    result = compare.mcnemar(10, 2)
    assert result.p_value == pytest.approx(158 / 4096)
    assert result.method.startswith("exact")
    # asymptotic: n = 45 >= 25, (|30 - 15| - 1)^2 / 45 = 196 / 45 = 4.3556
    result = compare.mcnemar(30, 15)
    assert result.statistic == pytest.approx(196 / 45)
    assert result.method.startswith("asymptotic")
    assert compare.mcnemar(13, 12).method.startswith("asymptotic")  # 25 discordant: asymptotic
    assert compare.mcnemar(12, 12).method.startswith("exact")  # 24 < 25: exact, p = 1 (min = n / 2)
    assert compare.mcnemar(12, 12).p_value == 1.0
    assert compare.mcnemar(0, 0).p_value == 1.0


def test_mcnemar_matches_scipy_on_random_cases() -> None:
    from scipy import stats

    rng = random.Random(20261201)
    for _ in range(2000):
        b01, b10 = rng.randint(0, 80), rng.randint(0, 80)
        if rng.random() < 0.5:
            b01, b10 = rng.randint(0, 15), rng.randint(0, 15)
        n = b01 + b10
        got = compare.mcnemar(b01, b10)
        if n < 25:
            expected = 1.0 if n == 0 else stats.binomtest(min(b01, b10), n, 0.5).pvalue
        else:
            expected = stats.chi2.sf((abs(b01 - b10) - 1) ** 2 / n, 1)
        assert got.p_value == pytest.approx(expected, rel=1e-9, abs=1e-15), (b01, b10)
        assert compare.mcnemar(b01, b10, exact=True).p_value == pytest.approx(
            1.0 if n == 0 else stats.binomtest(min(b01, b10), n, 0.5).pvalue, rel=1e-9, abs=1e-15
        )


def test_compare_correctness_pairs() -> None:
    a = {"q1": True, "q2": False, "q3": True, "q4": None}
    b = {"q1": False, "q2": True, "q3": True, "q4": True}
    result = compare.compare_correctness(a, b)
    # q1: A right B wrong -> b10 = 1; q2: b01 = 1; q3 both right; q4 excluded -> 3 paired
    assert (result["b01"], result["b10"], result["both_correct"], result["excluded"]) == (1, 1, 1, 1)
    assert result["accuracy_a"] == pytest.approx(200 / 3)
    assert result["p_value"] == 1.0  # exact, min = 1 of n = 2: 2 * 3/4 -> capped at 1


# ---------------------------------------------------------------------------------------------------------
# Slim sampling
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "ratio", "minimum", "expected"),
    [
        (100, 0.05, 200, 100),  # m <= k: all
        (200, 0.05, 200, 200),  # m == k: all
        (201, 0.05, 200, 200),  # m*r = 10.05 < k < m: k
        (1000, 0.05, 200, 200),  # 50 < 200 < 1000: k
        (4000, 0.05, 200, 200),  # m*r = 200 >= k: ceil(200) = 200
        (4001, 0.05, 200, 201),  # m*r = 200.05: ceil = 201
        (5000, 0.05, 200, 250),  # 250
        (80_000, 0.025, 200, 2000),  # 2000
    ],
)
def test_slim_group_quota(size: int, ratio: float, minimum: int, expected: int) -> None:
    assert group_quota(size, ratio, minimum) == expected


def test_slim_groups_by_type_and_answer() -> None:
    entries = (
        [{"question_type": "A", "labeled_answer": "x", "i": i} for i in range(10)]  # r*m = 5 >= k=3: 5
        + [{"question_type": "A", "labeled_answer": "y", "i": i} for i in range(2)]  # m <= k: 2
        + [{"question_type": "B", "labeled_answer": "x", "i": i} for i in range(5)]  # 2.5 < 3 < 5: 3
    )
    result = slim(entries, KINDS["tdiuc"], ratio=0.5, minimum=3, seed=7)
    assert len(result.entries) == 10
    assert result.counts == {"A": (12, 7), "B": (5, 3)}
    kept = [(e["question_type"], e["labeled_answer"]) for e in result.entries]
    assert kept.count(("A", "x")) == 5 and kept.count(("A", "y")) == 2 and kept.count(("B", "x")) == 3
    again = slim(entries, KINDS["tdiuc"], ratio=0.5, minimum=3, seed=7)
    assert again.entries == result.entries  # seeded


def test_slim_vqdv1_keeps_multi_box_queries() -> None:
    box = [1, 2, 3, 4]
    entries = (
        [{"question_type": "t", "gtbox": [[]], "i": i} for i in range(4)]  # 0 boxes: 4 * 0.5 = 2
        + [{"question_type": "t", "gtbox": [box], "i": i} for i in range(4)]  # 1 box: 2
        + [{"question_type": "t", "gtbox": [box, box], "i": i} for i in range(3)]  # 2 boxes: all 3
    )
    result = slim(entries, KINDS["vqdv1"], ratio=0.5, minimum=1, seed=0)
    sizes = [len([b for b in e["gtbox"] if b]) for e in result.entries]
    assert (sizes.count(0), sizes.count(1), sizes.count(2)) == (2, 2, 3)


# ---------------------------------------------------------------------------------------------------------
# Prompts (byte-exact against the spec's files) and num2words spelling
# ---------------------------------------------------------------------------------------------------------

PROMPT_DIR = __import__("pathlib").Path(__file__).parents[1] / "data" / "spec" / "prompts"


@pytest.mark.parametrize(
    ("dataset", "variant", "filename"),
    [
        ("tdiuc", "hf", "revisiting_tdiuc_hf_models.txt"),
        ("tdiuc", "gpt", "revisiting_tdiuc_gpt.txt"),
        ("tallyqa", "hf", "revisiting_tallyqa.txt"),
        ("tallyqa", "gpt", "revisiting_tallyqa_gpt.txt"),
        ("dvqa", "hf", "revisiting_dvqa.txt"),
        ("dvqa", "gpt", "revisiting_dvqa_gpt.txt"),
    ],
)
def test_prompts_match_spec_files(dataset: str, variant: str, filename: str) -> None:
    from lmms_eval_tasks.tasks.revisiting.datasets import DATASETS

    assert DATASETS[dataset].prompts[variant] == (PROMPT_DIR / filename).read_text(encoding="utf-8")


def test_llava15_tdiuc_wrapping() -> None:
    # spec: LLaVA-1.5 wraps it as `USER: <image>\n{question},{prompt}\nASSISTANT:` (no space after the comma)
    from lmms_eval_tasks.tasks.revisiting.datasets import TDIUC, TDIUC_INSTRUCTION

    assert TDIUC.prompts["llava15"] == "{question}," + TDIUC_INSTRUCTION


def test_vqdv1_prompts_match_spec() -> None:
    from lmms_eval_tasks.tasks.vqdv1 import prompts

    api = (PROMPT_DIR / "revisiting_vqdv1_gpt.txt").read_text(encoding="utf-8")
    assert prompts.TEMPLATES["api"] == api
    assert prompts.LLAVA15_INSTRUCTION == (
        "Please answer the question by generating a list of bounding box coordinates around the objects the "
        "question is asking, and if no such object exists in the image, answer: [[]]"
    )
    assert prompts.LLAVA_NEXT_INSTRUCTION == (
        "Please generate a list of bounding boxes coordinates of the region this query describes. Use the "
        "format [[x_min,y_min,x_max,y_max]....]. Do not respond in sentences, and only generate the bounding "
        "boxes. Respond with an empty list [[]], if no such region exists in the image."
    )


@pytest.mark.parametrize(
    ("number", "words"),
    [  # num2words 0.5.x English cardinals (its merge rule: "-" below 100, " and " after a hundred/scale
        # when the rest is < 100, ", " otherwise)
        (0, "zero"),
        (15, "fifteen"),
        (21, "twenty-one"),
        (100, "one hundred"),
        (105, "one hundred and five"),
        (1000, "one thousand"),
        (1001, "one thousand and one"),
        (1100, "one thousand, one hundred"),
        (1234, "one thousand, two hundred and thirty-four"),
        (100000, "one hundred thousand"),
        (2000000, "two million"),
    ],
)
def test_digits_spelled_as_num2words(number: int, words: str) -> None:
    from lmms_eval_tasks.tasks.revisiting.scoring import digits_to_words

    assert digits_to_words(str(number)) == words


def test_tallyqa_random_aggregates_match_reference() -> None:
    """Micro, bucket macro and clipped RMSE per split recomputed independently on random records."""
    rng = random.Random(5)
    words = {0: "zero", 1: "one", 2: "two", 3: "three", 7: "seven", 15: "fifteen", 20: "twenty"}
    records = []
    for i in range(600):
        answer = rng.choice([0, 0, 1, 1, 2, 3, 4, 5, 6, 9, 12])
        kind = rng.random()
        if kind < 0.5:
            value = rng.choice([answer, answer, rng.randint(-2, 25)])
            text = str(value)
        elif kind < 0.8:
            value = rng.choice(list(words))
            text = words[value].capitalize() + rng.choice(["", "."])
        else:
            value, text = None, rng.choice(["many", "a few", "lots of them", ""])
        simple = rng.random() < 0.5
        records.append({"question_id": i, "answer": answer, "prediction": text, "issimple": simple})
        records[-1]["_value"] = value
    m = tallyqa.score(records)[0]
    for split, flag in (("simple", True), ("complex", False)):
        items = [r for r in records if r["issimple"] is flag]
        right = [r["_value"] is not None and r["_value"] == r["answer"] for r in items]
        assert m[f"{split}_micro_accuracy"] == pytest.approx(100 * sum(right) / len(items))
        buckets: dict[str, list[bool]] = {}
        for r, ok in zip(items, right, strict=True):
            buckets.setdefault(str(min(r["answer"], 4)), []).append(ok)
        macro = sum(100 * sum(v) / len(v) for v in buckets.values()) / len(buckets)
        assert m[f"{split}_macro_accuracy"] == pytest.approx(macro)
        errors = [(min(max(r["_value"], 0), 15) - r["answer"]) ** 2 for r in items if r["_value"] is not None]
        assert m[f"{split}_rmse"] == pytest.approx(math.sqrt(sum(errors) / len(errors)))
        assert m[f"{split}_unparsed"] == sum(r["_value"] is None for r in items)
