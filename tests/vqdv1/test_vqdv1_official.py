"""VQDv1 ``protocol=official`` against the official script's printed numbers, and where the default differs.

The authors' script (``eval_script/VQDv1_eval.py``, KevinLuJian/MLLM_supplemental) is "All rights
reserved", so it is not vendored: ``tests/data/revisiting_official/vqdv1_eval_restated.py`` restates its
computation (see the README there) and is run here in a subprocess, like the script, on generated answers.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.tasks.vqdv1 import scoring as vqdv1

RESTATED = Path(__file__).parents[1] / "data" / "revisiting_official" / "vqdv1_eval_restated.py"


def _box(rng: random.Random, width: int, height: int) -> list[int]:
    w, h = rng.randint(5, width // 3), rng.randint(5, height // 3)
    return [rng.randint(0, width - w), rng.randint(0, height - h), w, h]


def _predicted_text(rng: random.Random, gt: list[list[int]], width: int, height: int, messy: bool) -> str:
    boxes: list[str] = []
    for x, y, w, h in gt:
        roll = rng.random()
        if roll < 0.15:
            continue  # missed
        if roll < 0.45:
            values = [x, y, x + w, y + h]  # exact pixels
        elif roll < 0.65:  # jittered, sometimes below IoU 0.5
            shift = rng.choice([1, 3, w // 2, w])
            values = [x + shift, y, x + w + shift, y + h]
        else:  # relative [0, 1] (the official rule: all four < 1)
            values = [round(v, 4) for v in (x / width, y / height, (x + w) / width, (y + h) / height)]
            if max(values) >= 1:
                values = [x, y, x + w, y + h]
        boxes.append("[" + ", ".join(str(v) for v in values) + "]")
        if rng.random() < 0.15:
            boxes.append(boxes[-1])  # duplicate
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        x, y, w, h = _box(rng, width, height)
        boxes.append(f"[{x}, {y}, {x + w}, {y + h}]")  # extra (false positive unless it lands on a box)
    rng.shuffle(boxes)
    if not boxes:
        return rng.choice(["[[]]", "[]", "There is no such object.", ""])
    text = "[" + ", ".join(boxes) + "]"
    if messy:
        text = rng.choice(["", "Sure! ", "The boxes [x1, y1, x2, y2] are: "]) + text
        if rng.random() < 0.3:
            text = text.replace("], [", "],\n[", 1)
        if rng.random() < 0.2:
            text += " [-3, 4, 20, 30]"
    return text


def generated_answers(seed: int, count: int, *, messy: bool, max_boxes: int = 9) -> list[dict]:
    """Seeded answer rows in the official file layout, with the pack's record fields too."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        width, height = rng.choice([(640, 480), (500, 375), (333, 500)])
        n_gt = rng.choice([0, 0, 1, 1, 1, 2, 2, 3, 4, 5, max_boxes])
        gt = [_box(rng, width, height) for _ in range(n_gt)] or [[]]
        prediction = _predicted_text(rng, gt if gt != [[]] else [], width, height, messy)
        rows.append(
            {
                "question_id": f"q{index}",
                "labeled_answer": gt,
                "gtbox": gt,
                "predicted_answer": prediction,
                "prediction": prediction,
                "width": width,
                "height": height,
            }
        )
    return rows


def run_official(rows: list[dict], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(RESTATED), "--path", str(path)], capture_output=True, text=True, check=False
    )


def printed(output: str) -> dict[str, float]:
    lines: dict[str, float] = {}
    for line in output.splitlines():
        if match := re.fullmatch(r"Number of bounding boxes: (\d+), Accuracy: (\S+)", line):
            lines[f"count_{match[1]}"] = float(match[2])
        elif match := re.fullmatch(r"Number of bounding boxes above 4: \d+, Accuracy: (\S+)", line):
            lines["above_4"] = float(match[1])
        elif match := re.fullmatch(r"(Micro|Macro) Accuracy: (\S+)", line):
            lines[match[1]] = float(match[2])
    return lines


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("messy", [False, True])
def test_official_protocol_equals_the_scripts_printed_numbers(tmp_path, seed, messy):
    rows = generated_answers(seed, 400, messy=messy)
    result = run_official(rows, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = printed(result.stdout)
    metrics = vqdv1.score(rows, protocol="official")[0]
    # The paper's "Micro F1" is the line labelled "Macro Accuracy", its "Macro F1" the one labelled "Micro".
    assert metrics["micro_f1"] == pytest.approx(100 * lines["Macro"], abs=1e-9)
    assert metrics["macro_f1"] == pytest.approx(100 * lines["Micro"], abs=1e-9)
    for count in range(5):
        assert metrics[f"f1_{count}"] == pytest.approx(100 * lines[f"count_{count}"], abs=1e-9)
    assert metrics["f1_5+"] == pytest.approx(100 * lines["above_4"], abs=1e-9)
    assert metrics["official_largest_count"] == 9 and metrics["official_script_would_fail"] == 0


def test_official_protocol_reports_where_the_script_crashes(tmp_path):
    rows = generated_answers(5, 60, messy=False, max_boxes=4)
    rows = [row for row in rows if len(row["gtbox"]) < 5]
    result = run_official(rows, tmp_path)
    assert result.returncode != 0 and "ZeroDivisionError" in result.stderr
    metrics = vqdv1.score(rows, protocol="official")[0]
    assert metrics["official_script_would_fail"] == 1 and metrics["queries_5+"] == 0


def test_default_differs_exactly_where_the_spec_says():
    rows = generated_answers(7, 600, messy=False)
    default = vqdv1.score_queries(rows)
    official = vqdv1.score_queries(rows, protocol="official")
    # Clean outputs: both extractions read the same boxes, so matching (TP) is identical.
    assert [(s.n_gt, s.n_pred, s.tp) for s in default] == [(s.n_gt, s.n_pred, s.tp) for s in official]
    # 1. Per-query F1: only the false negatives differ (official FN = every gt box, default FN = gt - TP),
    #    which changes F1 exactly on the queries with ground truth and at least one hit.
    differing = {s.question_id for s, o in zip(default, official, strict=True) if s.f1 != o.f1}
    expected = {s.question_id for s in default if s.n_gt > 0 and s.tp > 0}
    assert differing == expected and expected
    for s, o in zip(default, official, strict=True):
        fp = s.n_pred - s.tp
        if s.n_gt and s.n_pred:
            assert s.f1 == pytest.approx(2 * s.tp / (2 * s.tp + fp + (s.n_gt - s.tp)))
            assert o.f1 == pytest.approx(2 * o.tp / (2 * o.tp + fp + o.n_gt))
    # A perfect single-box answer: 1 vs 2/3 (the spec's "capped at 0.667").
    perfect = {"question_id": 1, "gtbox": [[0, 0, 10, 10]], "width": 9, "height": 9}
    perfect["prediction"] = "[[0,0,10,10]]"
    assert vqdv1.score([perfect])[0]["micro_f1"] == 100.0
    assert vqdv1.score([perfect], protocol="official")[0]["micro_f1"] == pytest.approx(200 / 3)
    # 2. micro F1: the mean over queries in both (only the per-query F1 differs).
    default_metrics = vqdv1.score(rows)[0]
    official_metrics = vqdv1.score(rows, protocol="official")[0]
    assert default_metrics["micro_f1"] == pytest.approx(100 * sum(s.f1 for s in default) / len(default))
    assert official_metrics["micro_f1"] == pytest.approx(100 * sum(o.f1 for o in official) / len(official))

    # 3. macro F1: default = mean over the five buckets 0, 1, 2, 3, 4+; official = (mean of each count 0..4
    #    + the mean of the largest count once more) / 6 - shown with the same (default) per-query F1s.
    def mean(values):
        return sum(values) / len(values)

    buckets = {b: [s.f1 for s in default if vqdv1.count_bucket(s.n_gt) == b] for b in vqdv1.BUCKETS}
    assert default_metrics["macro_f1"] == pytest.approx(100 * mean([mean(v) for v in buckets.values()]))
    counts = {n: [o.f1 for o in official if o.n_gt == n] for n in {o.n_gt for o in official}}
    script_macro = (sum(mean(counts[n]) for n in range(5)) + mean(counts[max(counts)])) / 6
    assert official_metrics["macro_f1"] == pytest.approx(100 * script_macro)
