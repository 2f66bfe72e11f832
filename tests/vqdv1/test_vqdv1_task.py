"""VQDv1 task pieces: prompts per model, the generated sample, hooks, baseline answers, score/compare CLI."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.sample_data import COLOURS
from lmms_eval_tasks.tasks.revisiting import generate
from lmms_eval_tasks.tasks.vqdv1 import config, hooks, make_sample, prompts
from lmms_eval_tasks.tasks.vqdv1 import scoring as vqdv1

REPO = Path(__file__).resolve().parents[2]
SPEC_PROMPT = REPO / "tests" / "data" / "spec" / "prompts" / "revisiting_vqdv1_gpt.txt"
# The spec's LLaVA-1.5 and LLaVA-NeXT prompts (paper Table 11), as the spec quotes them.
SPEC_LLAVA15 = (
    "Please answer the question by generating a list of bounding box coordinates around the objects the "
    "question is asking, and if no such object exists in the image, answer: [[]]"
)
SPEC_LLAVA_NEXT = (
    "Please generate a list of bounding boxes coordinates of the region this query describes. Use the format "
    "[[x_min,y_min,x_max,y_max]....]. Do not respond in sentences, and only generate the bounding boxes. "
    "Respond with an empty list [[]], if no such region exists in the image."
)


# ------------------------------------------------------------------ prompts


def test_api_prompt_is_the_spec_file_byte_for_byte():
    template = SPEC_PROMPT.read_text(encoding="utf-8")
    assert prompts.TEMPLATES["api"] == template
    assert prompts.build_prompt("the red {dog}") == template.replace("{question}", "the red {dog}")


def test_llava_prompts_per_model(monkeypatch):
    monkeypatch.delenv(prompts.PROMPT_ENV, raising=False)
    assert prompts.build_prompt("Show the cat.", {"prompt": "llava15"}) == (
        "Query: Show the cat.,Instruction: " + SPEC_LLAVA15
    )
    assert prompts.build_prompt("Show the cat.", {"prompt": "llava_next"}) == (
        "Query: \nShow the cat., prompt: " + SPEC_LLAVA_NEXT
    )
    # The host's per-model kwargs reach doc_to_text: llava_hf gets LLaVA-1.5's, other models the API one.
    assert prompts.SPECIFIC_KWARGS["llava_hf"] == {"prompt": "llava15"}
    assert prompts.SPECIFIC_KWARGS["default"] == {"prompt": "api"}
    assert hooks.doc_to_text({"question": "Q?"}, {"prompt": "api"}).startswith("query: Q?, instruction: ")


def test_user_prompt_from_kwargs_or_environment(monkeypatch):
    monkeypatch.delenv(prompts.PROMPT_ENV, raising=False)
    assert prompts.build_prompt("dog", {"prompt": "Boxes for: {question}"}) == "Boxes for: dog"
    monkeypatch.setenv(prompts.PROMPT_ENV, "llava_next")
    assert prompts.build_prompt("dog", {"prompt": "llava15"}).endswith(SPEC_LLAVA_NEXT)
    monkeypatch.setenv(prompts.PROMPT_ENV, "no placeholder")
    with pytest.raises(ValueError, match="question"):
        prompts.build_prompt("dog")


# ------------------------------------------------------------------ sample


def test_sample_covers_every_bucket_and_boxes_cover_the_drawn_shapes():
    rows = make_sample.rows()
    counts = [0 if row["gtbox"] == [[]] else len(row["gtbox"]) for row in rows]
    assert sorted(set(counts)) == [0, 1, 2, 3, 4, 5, 7]
    assert counts.count(0) == 6 and sum(count >= 5 for count in counts) == 2
    for row in rows:
        image = Image.open(io.BytesIO(row["image"]["bytes"])).convert("RGB")
        assert image.size == (row["width"], row["height"])
        words = row["question"].removeprefix("Show the ").removesuffix(" in the picture.").split()
        colour = COLOURS[words[0]] if len(words) == 2 else None
        for x, y, w, h in [box for box in row["gtbox"] if box]:
            # the box's centre pixel has the shape's colour (the queried one, when the query names it)
            centre = image.getpixel((int(x + w / 2), int(y + h * 0.6)))
            assert centre != (235, 235, 235), (row["question_id"], (x, y, w, h))
            if colour is not None:
                assert centre == colour, (row["question"], centre)


def test_generated_files_match_the_repository():
    for relative, content in generate.vqdv1_files().items():
        data = content.encode("utf-8") if isinstance(content, str) else content
        assert (REPO / relative).read_bytes() == data, f"{relative} drifted: run make generate"


def test_perfect_answers_on_the_sample_score_100():
    records = []
    for row in make_sample.rows():
        boxes = [f"[{x}, {y}, {x + w}, {y + h}]" for x, y, w, h in [b for b in row["gtbox"] if b]]
        doc = {key: value for key, value in row.items() if key != "image"}
        records.append(hooks.make_record(doc, ["[" + ", ".join(boxes) + "]" if boxes else "[[]]"], "t"))
    metrics = vqdv1.score(records)[0]
    assert (metrics["micro_f1"], metrics["macro_f1"], metrics["unparsed"]) == (100.0, 100.0, 0)
    official = vqdv1.score(records, protocol="official")[0]
    # 6 empty queries score 1, the 13 others 2/3: (6 + 13 * 2/3) / 19
    assert official["micro_f1"] == pytest.approx(100 * (6 + 13 * 2 / 3) / 19)


# ------------------------------------------------------------------ hooks and baseline


def test_make_record_copies_the_dataset_fields_and_the_raw_text():
    doc = {
        "question_id": 3,
        "gtbox": [[1.0, 2.0, 3.0, 4.0]],
        "width": 10,
        "height": 20,
        "question": "Q",
        "question_type": "simple",
        "image_id": 1,
        "file_name": "a.png",
        "pack_task": "vqdv1_sample",
    }
    record = hooks.make_record(doc, ["[[1, 2, 4, 6]]"], "vqdv1_sample")
    dataset_fields = {key: value for key, value in doc.items() if key != "pack_task"}  # the pack's own field
    assert record == {**dataset_fields, "prediction": "[[1, 2, 4, 6]]"}
    assert hooks.make_record({**doc, "gtbox": "[[]]"}, [""], "t")["gtbox"] == [[]]
    with pytest.raises(RecordError, match="'width'"):
        hooks.make_record({key: value for key, value in doc.items() if key != "width"}, ["x"], "t")


def test_doc_to_visual_names_the_query_for_a_missing_image():
    with pytest.raises(RecordError, match=r"record 7: field 'image'"):
        hooks.doc_to_visual({"question_id": 7, "image": None})


def test_scoring_options_from_the_environment(monkeypatch):
    monkeypatch.setenv("LMMS_EVAL_TASKS_VQDV1_COORDS", "grid1000")
    monkeypatch.setenv("LMMS_EVAL_TASKS_VQDV1_PROTOCOL", "official")
    assert config.score_options("vqdv1") == {"protocol": "official", "coords": "grid1000"}
    monkeypatch.setenv("LMMS_EVAL_TASKS_VQDV1_COORDS", "percent")
    with pytest.raises(ValueError, match="LMMS_EVAL_TASKS_VQDV1_COORDS"):
        config.score_options("vqdv1")


def test_random_answer_is_a_box_list_inside_the_image():
    rng = random.Random(0)
    sizes = set()
    for _ in range(200):
        text = hooks.random_answer("vqdv1_sample", {"width": 320, "height": 240}, rng)
        boxes = vqdv1.parse_boxes(text, 320, 240)
        sizes.add(len(boxes))
        assert text == "[[]]" if not boxes else text.startswith("[[")
        assert all(0 <= x1 <= x2 <= 320 and 0 <= y1 <= y2 <= 240 for x1, y1, x2, y2 in boxes)
    assert sizes == {0, 1, 2, 3, 4, 5}


# ------------------------------------------------------------------ CLI


def _cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", *arguments], capture_output=True, text=True, check=False
    )


def _records(predictions: list[str]) -> list[dict]:
    gt = [[[0, 0, 10, 10]], [[]], [[0, 0, 10, 10], [20, 20, 10, 10]]]
    return [
        {"question_id": index, "gtbox": boxes, "width": 50, "height": 50, "prediction": prediction}
        for index, (boxes, prediction) in enumerate(zip(gt, predictions, strict=True))
    ]


def test_score_cli_default_and_official(tmp_path):
    path = tmp_path / "records.jsonl"
    records = _records(["[[0, 0, 10, 10]]", "[[]]", "[[0, 0, 10, 10]]"])
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    default = _cli("score", "vqdv1", str(path))
    assert default.returncode == 0, default.stderr
    # F1: 1, 1, and TP 1 of 2 gt with 1 prediction: P 1, R 1/2 -> 2/3; micro = (2 + 2/3) / 3
    assert json.loads(default.stdout)["micro_f1"] == pytest.approx(100 * (2 + 2 / 3) / 3)
    official = _cli("score", "vqdv1", str(path), "-o", "protocol=official")
    assert official.returncode == 0, official.stderr
    # official: 2/3, 1, and P 1, R 1/3 -> 1/2: micro = (2/3 + 1 + 1/2) / 3
    assert json.loads(official.stdout)["micro_f1"] == pytest.approx(100 * (2 / 3 + 1 + 1 / 2) / 3)


def test_compare_cli_uses_f1_equal_to_one(tmp_path):
    run_a, run_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    # A: correct, correct, wrong (one of two boxes); B: wrong (no box), correct, correct.
    for path, predictions in (
        (run_a, ["[[0, 0, 10, 10]]", "[[]]", "[[0, 0, 10, 10]]"]),
        (run_b, ["[[]]", "[[]]", "[[0, 0, 10, 10], [20, 20, 30, 30]]"]),
    ):
        path.write_text("".join(json.dumps(r) + "\n" for r in _records(predictions)), encoding="utf-8")
    result = _cli("compare", "vqdv1", str(run_a), str(run_b))
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert (output["b01"] + output["b10"], output["b01"] * output["b10"]) == (2, 1)
