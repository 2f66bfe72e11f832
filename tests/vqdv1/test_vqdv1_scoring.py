"""VQDv1 scoring: box parsing, coordinate conventions, greedy matching cases, hand-computed metrics."""

from __future__ import annotations

import math
import re
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.tasks.vqdv1 import scoring as vqdv1

W = H = 100


def record(gtbox, prediction, question_id="q", width=W, height=H):
    return {
        "question_id": question_id,
        "gtbox": gtbox,
        "width": width,
        "height": height,
        "prediction": prediction,
    }


def query(gtbox, prediction, **options):
    return vqdv1.score_query(record(gtbox, prediction), 0, **options)


# ------------------------------------------------------------------ parsing


def test_parser_reads_every_bracketed_group_of_four_numbers():
    text = "Sure: [[10, 20, 30, 40], [5,6,7,8]] and [1, 2, 3] and [1,2,3,4,5] and [x1, y1, x2, y2]"
    assert vqdv1.parse_boxes(text, W, H) == [(10, 20, 30, 40), (5, 6, 7, 8)]


def test_parser_official_extraction_keeps_the_scripts_quirks():
    # The script reads digits inside words ("x1" -> 1), drops the sign of integers, and does not read a
    # group spanning a newline; the default reads none of those as boxes except the signed one.
    assert vqdv1.parse_boxes("[x1, y1, x2, y2]", W, H, official=True) == [(1, 1, 2, 2)]
    assert vqdv1.parse_boxes("[x1, y1, x2, y2]", W, H) == []
    assert vqdv1.parse_boxes("[-5, 10, 20, 30]", W, H, official=True) == [(5, 10, 20, 30)]
    assert vqdv1.parse_boxes("[-5, 10, 20, 30]", W, H) == [(-5, 10, 20, 30)]
    assert vqdv1.parse_boxes("[10,\n20, 30, 40]", W, H, official=True) == []
    assert vqdv1.parse_boxes("[10,\n20, 30, 40]", W, H) == [(10, 20, 30, 40)]


def test_coordinate_conventions():
    # auto (the official rule): all four < 1 -> relative; 0.1*200, 0.2*100, 0.5*200, 0.6*100.
    assert vqdv1.parse_boxes("[0.1, 0.2, 0.5, 0.6]", 200, 100)[0] == pytest.approx((20, 20, 100, 60))
    # ... a 1 among them means pixels under auto; coords=relative scales regardless.
    assert vqdv1.parse_boxes("[0.5, 0.5, 1, 1]", 200, 100) == [(0.5, 0.5, 1, 1)]
    assert vqdv1.parse_boxes("[0.5, 0.5, 1, 1]", 200, 100, coords="relative") == [(100, 50, 200, 100)]
    assert vqdv1.parse_boxes("[100, 200, 500, 1000]", 200, 100, coords="grid1000") == [(20, 20, 100, 100)]
    assert vqdv1.parse_boxes("[0.2, 0.4, 0.5, 0.6]", 200, 100, coords="pixel") == [(0.2, 0.4, 0.5, 0.6)]
    # [x, y, w, h]: 10 + 5 = 15, 20 + 6 = 26.
    assert vqdv1.parse_boxes("[10, 20, 5, 6]", W, H, box_format="xywh") == [(10, 20, 15, 26)]
    qwen = "<ref>dog</ref><box>(100,200),(500,1000)</box> and <box>(0,0),(10,10)</box>"
    boxes = vqdv1.parse_boxes(qwen, 200, 100, syntax="qwen", coords="grid1000")
    assert boxes == [(20, 20, 100, 100), (0, 0, 2, 1)]
    with pytest.raises(ValueError, match="coords"):
        vqdv1.parse_boxes("[1,2,3,4]", W, H, coords="percent")


def test_explicit_empty_answers_are_not_unparsed():
    for text in ("[[]]", "[]", " [ [ ] ] ", "```json\n[[]]\n```", "None"):
        assert not query([[]], text).unparsed, text
    assert query([[]], "There is no dog.").unparsed
    assert query([[]], "").unparsed


# ------------------------------------------------------------------ matching cases


def test_empty_ground_truth_with_and_without_predictions():
    assert query([[]], "[[]]").f1 == 1.0
    assert query([], "[]").f1 == 1.0
    hit = query([[]], "[[1, 1, 5, 5]]")
    assert (hit.f1, hit.n_pred, hit.correct) == (0.0, 1, False)
    # The official script agrees on both (its FN rule only matters when there are ground-truth boxes).
    assert query([[]], "[[]]", protocol="official").f1 == 1.0
    assert query([[]], "[[1, 1, 5, 5]]", protocol="official").f1 == 0.0


def test_empty_prediction_against_boxes():
    score = query([[0, 0, 10, 10]], "[[]]")
    assert (score.f1, score.tp, score.n_pred, score.unparsed) == (0.0, 0, 0, False)


def test_duplicated_predictions_count_once():
    # gt (0,0,10,10); the same box twice: TP 1, FP 1, FN 0 -> P 1/2, R 1 -> F1 = 2*(1/2)*1/(3/2) = 2/3.
    score = query([[0, 0, 10, 10]], "[[0, 0, 10, 10], [0, 0, 10, 10]]")
    assert (score.tp, score.n_pred) == (1, 2)
    assert score.f1 == pytest.approx(2 / 3)
    # Official: FN = all gt = 1 -> R = 1/(1+1) = 1/2, P = 1/2 -> F1 1/2.
    official = query([[0, 0, 10, 10]], "[[0, 0, 10, 10], [0, 0, 10, 10]]", protocol="official")
    assert official.f1 == pytest.approx(0.5)


def test_relative_coordinates_match_pixel_ground_truth():
    # 200x100 image: [0.1, 0.2, 0.5, 0.6] -> (20, 20, 100, 60) = gt [20, 20, 80, 40] exactly.
    score = vqdv1.score_query(record([[20, 20, 80, 40]], "[[0.1, 0.2, 0.5, 0.6]]", width=200, height=100), 0)
    assert (score.tp, score.f1) == (1, 1.0)


def test_iou_exactly_one_half_is_a_hit():
    # gt (0,0,10,10) area 100; (0,0,10,5): intersection 50, union 100 -> IoU 0.5 exactly -> hit.
    assert vqdv1.iou((0, 0, 10, 10), (0, 0, 10, 5)) == 0.5
    assert query([[0, 0, 10, 10]], "[[0, 0, 10, 5]]").tp == 1
    # (0,0,10,4.9): 49 / 100 < 0.5 -> miss.
    assert query([[0, 0, 10, 10]], "[[0, 0, 10, 4.9]]").tp == 0


def test_greedy_order_when_a_prediction_could_match_two_ground_truth_boxes():
    # A = (0,0,10,10) [gt 0,0,10,10], B = (0,0,10,8) [gt 0,0,10,8]; P1 = (0,0,10,9), P2 = (0,4,10,10).
    # IoU(A,P1) = 90/100 = .9, IoU(A,P2) = 60/100 = .6, IoU(B,P1) = 80/90 = .889, IoU(B,P2) = 40/100 = .4.
    predictions = "[[0, 0, 10, 9], [0, 4, 10, 10]]"
    # Order A, B: A takes P1 (its best), B is left with P2 (0.4 < 0.5): TP 1 (a perfect pairing exists).
    first = query([[0, 0, 10, 10], [0, 0, 10, 8]], predictions)
    assert first.tp == 1
    assert first.f1 == pytest.approx(0.5)  # P = 1/2, R = 1/2
    # Order B, A: B takes P1 (.889 > .4), A takes P2 (.6): TP 2.
    second = query([[0, 0, 10, 8], [0, 0, 10, 10]], predictions)
    assert (second.tp, second.f1) == (2, 1.0)


def test_boxes_outside_the_image():
    # Entirely outside a 100x100 image: a false positive, no error.
    outside = query([[0, 0, 10, 10]], "[[300, 300, 400, 400], [0, 0, 10, 10]]")
    assert (outside.tp, outside.n_pred) == (1, 2)
    # Partly outside, not clipped (neither is the official script): (-10,0,10,10) vs (0,0,10,10):
    # intersection 100, union 200 + 100 - 100 = 200 -> 0.5 -> hit (clipping would give 1.0, also a hit).
    assert query([[0, 0, 10, 10]], "[[-10, 0, 10, 10]]").tp == 1
    # The official extraction drops the integer's sign: (10,0,10,10) has width 0 -> IoU 0 -> miss.
    assert query([[0, 0, 10, 10]], "[[-10, 0, 10, 10]]", protocol="official").tp == 0


def test_inverted_and_degenerate_boxes_do_not_raise():
    assert query([[0, 0, 10, 10]], "[[10, 10, 0, 0]]").tp == 0
    assert query([[5, 5, 0, 0]], "[[5, 5, 5, 5]]").tp == 0  # union 0: IoU 0 (the script divides by zero)
    assert query([[0, 0, 10, 10]], "[[0, 0, " + "9" * 400 + ", 10]]").tp == 0  # inf coordinates


# ------------------------------------------------------------------ hand-computed metrics

BOXES5 = [[0, 0, 10, 10], [20, 0, 10, 10], [40, 0, 10, 10], [60, 0, 10, 10], [80, 0, 10, 10]]
HAND = [
    record([[]], "[[]]", "q1"),  # F1 1 (bucket 0)
    record([[]], "[[1, 1, 5, 5]]", "q2"),  # F1 0, FP 1 (bucket 0)
    record([[0, 0, 10, 10]], "[[0, 0, 10, 10]]", "q3"),  # TP 1: F1 1; official P 1, R 1/2 -> 2/3
    # TP 1, FP 1, FN 1: P = R = 1/2 -> F1 1/2; official R = 1/3 -> 2*(1/2)(1/3)/(5/6) = 0.4
    record([[0, 0, 10, 10], [20, 20, 10, 10]], "[[0, 0, 10, 10], [50, 50, 60, 60]]", "q4"),
    record([[0, 0, 10, 10], [20, 20, 10, 10]], "I see none.", "q5"),  # F1 0, unparsed
    # 5 gt, 5 exact: F1 1; official R = 5/10 -> 2/3
    record(BOXES5, "[[0,0,10,10],[20,0,30,10],[40,0,50,10],[60,0,70,10],[80,0,90,10]]", "q6"),
    # 3 gt, 3 exact + a duplicate: P 3/4, R 1 -> F1 1.5/1.75 = 6/7; official R 3/6 -> .75/1.25 = .6
    record(BOXES5[:3], "[[0,0,10,10],[20,0,30,10],[40,0,50,10],[40,0,50,10]]", "q7"),
]


def test_default_metrics_by_hand():
    metrics = vqdv1.score(HAND)[0]
    # micro = (1 + 0 + 1 + 1/2 + 0 + 1 + 6/7) / 7 = 30.5/49
    assert metrics["micro_f1"] == pytest.approx(100 * 30.5 / 49)
    # buckets: 0: (1+0)/2 = .5; 1: 1; 2: (.5+0)/2 = .25; 3: 6/7; 4+: 1 -> macro = (2.75 + 6/7) / 5
    assert metrics["f1_0"] == pytest.approx(50)
    assert metrics["f1_2"] == pytest.approx(25)
    assert metrics["f1_3"] == pytest.approx(100 * 6 / 7)
    assert metrics["macro_f1"] == pytest.approx(100 * (2.75 + 6 / 7) / 5)
    # pooled precision/recall: 0: TP 0 of 1 predicted, no gt; 2: TP 1 of 2 predicted, of 4 gt;
    # 3: TP 3 of 4 predicted, of 3 gt; 4+: 5/5, 5/5.
    assert metrics["precision_0"] == 0.0 and math.isnan(metrics["recall_0"])
    assert (metrics["precision_1"], metrics["recall_1"]) == (100.0, 100.0)
    assert (metrics["precision_2"], metrics["recall_2"]) == (50.0, 25.0)
    assert (metrics["precision_3"], metrics["recall_3"]) == (75.0, 100.0)
    assert (metrics["precision_4+"], metrics["recall_4+"]) == (100.0, 100.0)
    assert (metrics["queries_0"], metrics["queries_2"], metrics["queries_4+"]) == (2, 2, 1)
    assert metrics["unparsed"] == 1 and metrics["buckets_present"] == 5


def test_official_metrics_by_hand():
    metrics = vqdv1.score(HAND, protocol="official")[0]
    # capped F1s: 1, 0, 2/3, .4, 0, 2/3, .6 -> "Macro Accuracy" = (10/3) / 7 = 10/21
    assert metrics["micro_f1"] == pytest.approx(100 * 10 / 21)
    # per count: 0 -> .5, 1 -> 2/3, 2 -> .2, 3 -> .6, (no 4), 5 -> 2/3; "Micro Accuracy" =
    # (.5 + 2/3 + .2 + .6 + 2/3 [the largest count, added again after the loop]) / 6 = 79/180
    assert metrics["macro_f1"] == pytest.approx(100 * 79 / 180)
    assert metrics["f1_2"] == pytest.approx(20)
    assert math.isnan(metrics["f1_4"]) and metrics["f1_5+"] == pytest.approx(100 * 2 / 3)
    assert metrics["official_largest_count"] == 5 and metrics["official_script_would_fail"] == 0


def test_per_question_correct_is_f1_equal_to_one():
    correct = vqdv1.per_question_correct(HAND)
    assert correct == {"q1": True, "q2": False, "q3": True, "q4": False, "q5": False, "q6": True, "q7": False}
    assert vqdv1.per_question_correct(HAND, protocol="official") == correct
    with pytest.raises(RecordError, match="duplicate"):
        vqdv1.per_question_correct([HAND[0], HAND[0]])


def test_bad_records_name_the_record_and_field():
    with pytest.raises(RecordError, match=r"record 0: field 'gtbox'"):
        vqdv1.score([{"question_id": 1, "width": 1, "height": 1, "prediction": ""}])[0]
    with pytest.raises(RecordError, match=r"record 1: field 'gtbox'"):
        vqdv1.score([record([[]], ""), record([[1, 2, 3]], "")])[0]
    with pytest.raises(RecordError, match=r"field 'width'"):
        vqdv1.score([record([[]], "", width=0)])[0]
    with pytest.raises(RecordError, match=r"field 'prediction'"):
        vqdv1.score([record([[]], ["[1,2,3,4]"])])[0]
    with pytest.raises(ValueError, match="protocol"):
        vqdv1.score([record([[]], "")], protocol="paper")[0]


def test_official_answer_file_field_names_are_accepted():
    row = {
        "question_id": 1,
        "labeled_answer": [[0, 0, 10, 10]],
        "predicted_answer": "[[0,0,10,10]]",
        "width": 100,
        "height": 100,
    }
    assert vqdv1.score([row])[0]["micro_f1"] == 100.0


def test_plot_is_written(tmp_path):
    path = tmp_path / "pr.png"
    vqdv1.plot_precision_recall(vqdv1.score(HAND)[0], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = vqdv1.bucket_table(vqdv1.score(HAND)[0])
    assert [row["boxes"] for row in rows] == list(vqdv1.BUCKETS)


# ------------------------------------------------------------------ parser properties

_ALPHABET = "[]()<>,. \n-+0123456789x١٢e"
OPTIONS = st.fixed_dictionaries(
    {
        "coords": st.sampled_from(vqdv1.COORDS),
        "box_format": st.sampled_from(vqdv1.BOX_FORMATS),
        "syntax": st.sampled_from(vqdv1.SYNTAXES),
        "official": st.booleans(),
    }
)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(), st.text(alphabet=_ALPHABET, max_size=200)), options=OPTIONS)
def test_parser_never_raises(text, options):
    boxes = vqdv1.parse_boxes(text, 640, 480, **options)
    assert all(len(box) == 4 for box in boxes)
    protocol = "official" if options["official"] else "default"
    vqdv1.score_query(record([[0, 0, 10, 10]], text), 0, protocol=protocol)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=_ALPHABET, max_size=200))
def test_official_scanners_equal_the_scripts_regexes(text):
    assert vqdv1.official_bracket_groups(text) == re.findall(r"\[(.*?)\]", text)
    assert vqdv1.official_numbers(text) == re.findall(r"[-+]?\d*\.\d+|\d+", text)


def _reference_default_parse(text):
    """The default rule written plainly: innermost [..] groups split into exactly four numbers."""
    boxes = []
    for match in re.finditer(r"\[([^\[\]]*)\]", text):
        parts = re.split(r"\s*,\s*|\s+", match.group(1).strip())
        if len(parts) == 4 and all(re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)", part) for part in parts):
            boxes.append(tuple(float(part) for part in parts))
    return boxes


_TOKENS = ["1", "2.5", ".5", "-3", "+4", "7.", "1.2.3", "x1", ""]
_SEPARATORS = [",", ", ", " ", " ,\n", ",,", "\t", "  ,  "]
_GROUP = st.builds(
    lambda numbers, separator, left, right: left + separator.join(numbers) + right,
    st.lists(st.sampled_from(_TOKENS), min_size=3, max_size=5),
    st.sampled_from(_SEPARATORS),
    st.sampled_from(["[", "[ ", "[[", "", "(["]),
    st.sampled_from(["]", " ]", "]]", "", "],"]),
)
_NOISE = st.sampled_from(["[", "]", ", ", " ", "\n", "x", "Sure: "])


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet="[]0123456789., -+\nx\t", max_size=120),
        st.lists(st.one_of(_GROUP, _NOISE), max_size=12).map("".join),
    )
)
def test_default_parser_equals_its_plain_definition(text):
    assert vqdv1.parse_boxes(text, 640, 480, coords="pixel") == _reference_default_parse(text)


_NUMBER = st.one_of(
    st.integers(0, 2000).map(str), st.floats(0, 1, allow_nan=False).map(lambda value: f"{value:.3f}")
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    numbers=st.lists(_NUMBER, min_size=4, max_size=4),
    separator=st.sampled_from([", ", ",", " ,\n", "], ["]),
    cut=st.integers(0, 40),
    options=OPTIONS,
)
# the shortest unit, "[0, 0, 0, 0]," (13 characters), cut by 40: 3 whole boxes lost (40 = 3 * 13 + 1)
@example(["0"] * 4, ",", 40, {"coords": "auto", "box_format": "xyxy", "syntax": "brackets",
                              "official": False})  # fmt: skip
def test_parser_linear_time_on_100kb_repeated_boxes(numbers, separator, cut, options):
    # A model repeating one box until its token limit: ~100 kB, cut anywhere. Generous budget (2 s; the
    # scanners take a few tens of milliseconds) so only a quadratic parser fails. The text ends on a whole
    # unit, so cutting ``cut`` characters touches at most ceil(cut / len(unit)) units: every other box
    # is found.
    unit = "[" + ", ".join(numbers) + "]" + separator
    text = "[" + unit * (100_000 // len(unit))
    text = text[: len(text) - cut]
    started = time.thread_time()
    boxes = vqdv1.parse_boxes(text, 640, 480, **options)
    elapsed = time.thread_time() - started
    assert elapsed < 2.0, f"{elapsed:.2f} s on {len(text)} characters"
    if options["syntax"] == "brackets":
        assert len(boxes) >= 100_000 // len(unit) - math.ceil(cut / len(unit))


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        "[" + "1" * 100_000,
        "[" + "1" * 100_000 + "]",
        "[" + "1," * 50_000 + "]",
        "-" * 100_000,
        "[" + "-1" * 50_000 + "]",
        "<box>(" * 20_000,
        "[" + " " * 100_000 + "]",
    ],
)
@pytest.mark.parametrize("official", [False, True])
def test_parser_linear_time_on_pathological_outputs(text, official):
    started = time.thread_time()
    for syntax in vqdv1.SYNTAXES:
        vqdv1.parse_boxes(text, 640, 480, syntax=syntax, official=official)
    assert time.thread_time() - started < 2.0


def test_scoring_a_100kb_repeated_output_with_many_gt_boxes_is_fast():
    gt = [[x * 10, 0, 8, 8] for x in range(20)]
    text = "[[0, 0, 8, 8], " * 7000
    started = time.thread_time()
    score = query(gt, text)
    assert time.thread_time() - started < 5.0
    assert (score.tp, score.n_pred) == (1, 7000)
