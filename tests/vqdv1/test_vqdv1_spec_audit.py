"""Independent audit of VQDv1 scoring against the spec: parsing, coordinates, greedy IoU matching, F1, the
per-bucket metrics and the official script's protocol (hand-computed numbers in the comments)."""

from __future__ import annotations

import math

import pytest

from lmms_eval_tasks.tasks.vqdv1 import scoring as vqdv1


def _box_text(boxes: list[tuple[float, float, float, float]]) -> str:
    return "[" + ", ".join(f"[{a}, {b}, {c}, {d}]" for a, b, c, d in boxes) + "]"


def _record(qid: int, gtbox: list, prediction: str, width: int = 100, height: int = 100) -> dict:
    return {"question_id": qid, "gtbox": gtbox, "prediction": prediction, "width": width, "height": height}


# ---------------------------------------------------------------------------------------------------------
# Parsing and coordinates
# ---------------------------------------------------------------------------------------------------------


def test_parse_pixel_and_relative_boxes() -> None:
    # 200 x 100 image: second box all < 1 -> relative: (0.1*200, 0.2*100, 0.5*200, 0.6*100)
    boxes = vqdv1.parse_boxes("[[10, 20, 30, 40], [0.1, 0.2, 0.5, 0.6]]", 200, 100)
    assert boxes == [(10, 20, 30, 40), (20, 20, 100, 60)]


def test_parse_relative_rule_needs_all_four_below_one() -> None:
    # 1.0 is not < 1: the box stays in pixels (the spec's and the script's rule)
    assert vqdv1.parse_boxes("[0.5, 0.5, 1.0, 1.0]", 200, 100) == [(0.5, 0.5, 1.0, 1.0)]


def test_parse_configurable_grid() -> None:
    # grid1000 on 200 x 100: (100*0.2, 200*0.1, 500*0.2, 1000*0.1)
    assert vqdv1.parse_boxes("[100, 200, 500, 1000]", 200, 100, coords="grid1000") == [(20, 20, 100, 100)]
    # qwen syntax <box>(x1,y1),(x2,y2)</box> on the 0-1000 grid
    text = "<box>(100,200),(500,1000)</box>"
    assert vqdv1.parse_boxes(text, 200, 100, coords="grid1000", syntax="qwen") == [(20, 20, 100, 100)]


@pytest.mark.parametrize(
    "text",
    ["[1, 2, 3]", "[1, 2, 3, 4, 5]", "__import__('os').system('true')", "[[]]", "", "no box", "[a, b, c, d]"],
)
def test_parse_only_groups_of_exactly_four_numbers(text: str) -> None:
    assert vqdv1.parse_boxes(text, 100, 100) == []


def test_parse_long_repetitive_output() -> None:
    text = "[[1, 2, 30, 40], " * 50_000 + "[1, 2"  # a runaway generation, truncated mid-box
    assert len(vqdv1.parse_boxes(text, 100, 100)) == 50_000
    assert len(vqdv1.parse_boxes("[" * 100_000 + "]", 100, 100, official=True)) == 0


# ---------------------------------------------------------------------------------------------------------
# IoU and greedy matching
# ---------------------------------------------------------------------------------------------------------


def test_iou_exactly_half_is_a_hit() -> None:
    # gt xywh [0, 0, 10, 10] -> (0,0,10,10) area 100; prediction (0,0,10,5): inter 50, union 100 -> 0.5 >= 0.5
    score = vqdv1.score_query(_record(1, [[0, 0, 10, 10]], "[[0, 0, 10, 5]]"), 0)
    assert (score.tp, score.f1) == (1, 1.0)
    # (0,0,10,4.9): IoU 0.49 -> FP and FN -> F1 0
    score = vqdv1.score_query(_record(1, [[0, 0, 10, 10]], "[[0, 0, 10, 4.9]]"), 0)
    assert (score.tp, score.f1) == (0, 0.0)


def test_greedy_in_ground_truth_order() -> None:
    # GT1 (0,0,10,10), GT2 (0,0,10,5); P1 (0,0,10,7): IoU GT1 0.7, GT2 50/70 = 0.714;
    # P2 (0,0,10,16): IoU GT1 100/160 = 0.625, GT2 50/160 = 0.3125.
    # GT1 first takes P1 (0.7 > 0.625); GT2 then has only P2 (0.3125): tp 1, fp 1, fn 1 -> F1 0.5.
    text = "[[0, 0, 10, 7], [0, 0, 10, 16]]"
    assert vqdv1.score_query(_record(1, [[0, 0, 10, 10], [0, 0, 10, 5]], text), 0).f1 == pytest.approx(0.5)
    # GT order reversed: GT2 takes P1 (0.714), GT1 takes P2 (0.625): tp 2 -> F1 1
    assert vqdv1.score_query(_record(1, [[0, 0, 10, 5], [0, 0, 10, 10]], text), 0).f1 == pytest.approx(1.0)


def test_a_missed_prediction_stays_available() -> None:
    # GT1 (0,0,10,10) best P (0,0,10,4): IoU 0.4 < 0.5, no hit, P not consumed (as the official script);
    # GT2 (0,0,10,4) then matches P (IoU 1): tp 1, n_pred 1, n_gt 2 -> P 1, R 0.5 -> F1 2/3
    score = vqdv1.score_query(_record(1, [[0, 0, 10, 10], [0, 0, 10, 4]], "[[0, 0, 10, 4]]"), 0)
    assert score.tp == 1
    assert score.f1 == pytest.approx(2 / 3)


def test_duplicate_predictions_are_false_positives() -> None:
    # one GT, the same box predicted twice: tp 1, fp 1 -> P 0.5, R 1 -> F1 2/3
    score = vqdv1.score_query(_record(1, [[0, 0, 10, 10]], "[[0, 0, 10, 10], [0, 0, 10, 10]]"), 0)
    assert score.f1 == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("gtbox", "prediction", "f1"),
    [
        ([[]], "[[]]", 1.0),
        ([], "[]", 1.0),
        ([[]], "There is no such object.", 1.0),  # no boxes predicted
        ([[]], "[[1, 2, 3, 4]]", 0.0),
        ([[0, 0, 10, 10]], "[[]]", 0.0),
    ],
)
def test_empty_ground_truth_and_empty_prediction(gtbox: list, prediction: str, f1: float) -> None:
    assert vqdv1.score_query(_record(1, gtbox, prediction), 0).f1 == f1


def test_official_fn_counts_every_gt_box() -> None:
    # one GT box found exactly: correct F1 1; the script's FN = 1 (all GT) -> P 1, R 1/2 -> F1 2/3
    record = _record(1, [[0, 0, 10, 10]], "[[0, 0, 10, 10]]")
    assert vqdv1.score_query(record, 0).f1 == 1.0
    assert vqdv1.score_query(record, 0, protocol="official").f1 == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------------------------------------
# Aggregates
# ---------------------------------------------------------------------------------------------------------


def test_default_metrics_by_hand() -> None:
    records = [
        _record(1, [[]], "[[]]"),  # bucket 0: F1 1
        _record(2, [[]], "[[5, 5, 20, 20]]"),  # bucket 0: F1 0, 1 predicted box
        _record(3, [[0, 0, 10, 10]], "[[0, 0, 10, 10]]"),  # bucket 1: F1 1
        _record(4, [[0, 0, 10, 10], [50, 50, 10, 10]], "[[0, 0, 10, 10]]"),  # bucket 2: P 1, R 1/2 -> 2/3
        _record(5, [[0, 0, 5, 5], [10, 0, 5, 5], [20, 0, 5, 5], [30, 0, 5, 5]], "nope"),  # 4+: 0 unparsed
    ]
    m = vqdv1.score(records)[0]
    assert m["micro_f1"] == pytest.approx(100 * (1 + 0 + 1 + 2 / 3 + 0) / 5)  # 53.333
    # buckets present: 0 -> 50, 1 -> 100, 2 -> 66.667, 4+ -> 0; mean = 216.667 / 4 = 54.167
    assert m["macro_f1"] == pytest.approx((50 + 100 + 200 / 3 + 0) / 4)
    assert m["precision_0"] == 0.0  # 0 TP of 1 predicted box
    assert math.isnan(m["recall_0"])  # no GT box
    assert (m["precision_2"], m["recall_2"]) == (100.0, 50.0)  # 1 TP / 1 predicted, 1 TP / 2 GT
    assert m["recall_4+"] == 0.0 and math.isnan(m["precision_4+"])
    assert m["unparsed"] == 1


def test_official_metrics_by_hand() -> None:
    six = [[10 * i, 0, 5, 5] for i in range(6)]
    records = [
        _record(1, [[]], "[[]]"),  # count 0: 1
        _record(2, [[0, 0, 10, 10]], "[[0, 0, 10, 10]]"),  # count 1: capped 2/3
        _record(3, [[0, 0, 10, 10], [50, 50, 10, 10]], "[[0, 0, 10, 10], [50, 50, 60, 60]]"),  # count 2: 2/3
        _record(4, six[:5], "[]"),  # count 5: 0
        _record(5, six, _box_text([(10 * i, 0, 10 * i + 5, 5) for i in range(6)])),  # count 6: 6/(6+6)... 2/3
    ]
    m = vqdv1.score(records, protocol="official")[0]
    # "Macro Accuracy" line (paper's micro): (1 + 2/3 + 2/3 + 0 + 2/3) / 5 = 0.6
    assert m["micro_f1"] == pytest.approx(60.0)
    # "Micro Accuracy" line: counts < 5: 1 + 2/3 + 2/3; + mean of the LAST key (count 6) 2/3 -> 3; / 6 = 0.5
    assert m["macro_f1"] == pytest.approx(50.0)
    assert m["f1_5+"] == pytest.approx(100 * (0 + 2 / 3) / 2)


# ---------------------------------------------------------------------------------------------------------
# Differential check against an independent reading of the spec, on random small-grid boxes
# ---------------------------------------------------------------------------------------------------------


def _reference_f1(gt: list, pred: list, official: bool) -> float:
    """The spec's per-query F1 written independently (official: FN = every GT box)."""

    def area(b):
        return (b[2] - b[0]) * (b[3] - b[1])

    def overlap(a, b):
        w = min(a[2], b[2]) - max(a[0], b[0])
        h = min(a[3], b[3]) - max(a[1], b[1])
        inter = max(0, w) * max(0, h)
        union = area(a) + area(b) - inter
        return inter / union if union > 0 else 0.0

    if not gt:
        return 1.0 if not pred else 0.0
    if not pred:
        return 0.0
    left = list(pred)
    tp = 0
    for g in gt:
        scores = [overlap(g, p) for p in left]
        if scores and max(scores) >= 0.5:
            del left[scores.index(max(scores))]  # first of the best
            tp += 1
    fp = len(left)
    fn = len(gt) if official else len(gt) - tp
    if tp == 0:
        return 0.0
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    return 2 * precision * recall / (precision + recall)


def test_random_queries_match_reference() -> None:
    import random

    rng = random.Random(11)

    def random_box():
        x, y = rng.randint(0, 8), rng.randint(0, 8)
        return [x, y, rng.randint(1, 6), rng.randint(1, 6)]  # xywh, pixels >= 1 so never relative

    for _ in range(3000):
        gt = [random_box() for _ in range(rng.choice([0, 0, 1, 1, 2, 3, 4, 6]))]
        pred = [random_box() for _ in range(rng.choice([0, 1, 2, 3, 5]))]
        pred_xyxy = [(x, y, x + w, y + h) for x, y, w, h in pred]
        gt_xyxy = [(x, y, x + w, y + h) for x, y, w, h in gt]
        text = _box_text(pred_xyxy) if pred else "[[]]"
        record = _record(1, gt or [[]], text)
        for official in (False, True):
            got = vqdv1.score_query(record, 0, protocol="official" if official else "default").f1
            assert got == pytest.approx(_reference_f1(gt_xyxy, pred_xyxy, official)), (gt, pred, official)
