"""TDIUC, TallyQA and DVQA task hooks: the paper's prompts byte for byte, per-model variants, records, the
prepared-folder switch, and bundled samples whose pictures really show what the answers say."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.framework import sample_data
from lmms_eval_tasks.framework.preparing import env_var, preparers
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.tasks.dvqa import hooks as dvqa_hooks
from lmms_eval_tasks.tasks.dvqa import make_sample as dvqa_sample
from lmms_eval_tasks.tasks.revisiting.datasets import DATASETS, SPECIFIC_KWARGS, TDIUC_ANSWER_SPACES
from lmms_eval_tasks.tasks.tallyqa import hooks as tallyqa_hooks
from lmms_eval_tasks.tasks.tallyqa import make_sample as tallyqa_sample
from lmms_eval_tasks.tasks.tdiuc import hooks as tdiuc_hooks
from lmms_eval_tasks.tasks.tdiuc import make_sample as tdiuc_sample

SPEC_PROMPTS = Path(__file__).parents[1] / "data" / "spec" / "prompts"


@pytest.mark.parametrize(
    ("dataset", "variant", "spec_file"),
    [
        ("tdiuc", "hf", "revisiting_tdiuc_hf_models.txt"),
        ("tdiuc", "gpt", "revisiting_tdiuc_gpt.txt"),
        ("tallyqa", "hf", "revisiting_tallyqa.txt"),
        ("tallyqa", "gpt", "revisiting_tallyqa_gpt.txt"),
        ("dvqa", "hf", "revisiting_dvqa.txt"),
        ("dvqa", "gpt", "revisiting_dvqa_gpt.txt"),
    ],
)
def test_prompts_are_the_specs_byte_for_byte(dataset: str, variant: str, spec_file: str) -> None:
    assert DATASETS[dataset].prompts[variant] == (SPEC_PROMPTS / spec_file).read_text(encoding="utf-8")


def test_llava15_layouts_follow_the_authors_inference_code() -> None:
    # TDIUC: f"USER: <image>\n{question},{prompt}\nASSISTANT:" -> no space after the comma
    hf = DATASETS["tdiuc"].prompts["hf"]
    assert DATASETS["tdiuc"].prompts["llava15"] == hf.replace("{question}, ", "{question},")
    # TallyQA/DVQA: f"USER: <image>\n {question}, {prompt} \nASSISTANT:" -> a space on both sides
    for dataset in ("tallyqa", "dvqa"):
        assert DATASETS[dataset].prompts["llava15"] == " " + DATASETS[dataset].prompts["hf"] + " "


def test_doc_to_text_per_model_and_override(monkeypatch) -> None:
    doc = {"question": "What color is the bus?"}
    assert tdiuc_hooks.doc_to_text(doc, {"prompt": "llava15"}).startswith(
        "What color is the bus?,Please answer"
    )
    assert tdiuc_hooks.doc_to_text(doc, None).startswith("What color is the bus?, Please answer")
    assert tallyqa_hooks.doc_to_text({"question": "How many?"}, {"prompt": "gpt"}) == (
        "How many?, please answer in one word."
    )
    monkeypatch.setenv("LMMS_EVAL_TASKS_DVQA_PROMPT", "Q: {question} A:")
    assert dvqa_hooks.doc_to_text({"question": "Which bar?"}, {"prompt": "llava15"}) == "Q: Which bar? A:"
    monkeypatch.setenv("LMMS_EVAL_TASKS_DVQA_PROMPT", "nonsense")
    with pytest.raises(ValueError, match="neither a variant"):
        dvqa_hooks.doc_to_text({"question": "Which bar?"})


def test_task_yaml_names_every_model_variant() -> None:
    text = (Path(tdiuc_hooks.__file__).parent / "yaml" / "_tdiuc_template_yaml").read_text()
    for model, variant in SPECIFIC_KWARGS.items():
        assert f'  {model}:\n    prompt: "{variant["prompt"]}"' in text


def test_records_carry_the_scorer_fields_and_fail_by_name() -> None:
    doc = {"question_id": 5, "question": "How many?", "answer": 3, "issimple": True, "image_id": 1}
    record = tallyqa_hooks.HOOKS.make_record(doc, ["3"], "tallyqa_sample")
    assert record == {
        "question_id": 5,
        "answer": 3,
        "issimple": True,
        "question": "How many?",
        "image_id": 1,
        "prediction": "3",
    }
    with pytest.raises(Exception, match="record 5: field 'template_id': missing from the document"):
        dvqa_hooks.HOOKS.make_record({"question_id": 5, "answer": "3"}, ["3"], "dvqa_sample")
    with pytest.raises(Exception, match="field 'image': missing"):
        tdiuc_hooks.doc_to_visual({"question_id": 9, "image": None})


def test_protocol_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("LMMS_EVAL_TASKS_TALLYQA_PROTOCOL", "official")
    assert get_benchmark("tallyqa").task_options("tallyqa") == {"protocol": "official"}
    monkeypatch.setenv("LMMS_EVAL_TASKS_TALLYQA_PROTOCOL", "paper")
    with pytest.raises(ValueError, match="expected default or official"):
        get_benchmark("tallyqa").task_options("tallyqa")


def test_random_answers_stay_in_the_answer_spaces() -> None:
    import random

    rng = random.Random(0)
    counts = {DATASETS["tallyqa"].random_answer("tallyqa", {}, rng) for _ in range(300)}
    assert counts == {str(n) for n in range(16)}
    dvqa_doc = {"question": "Is the value of a larger?"}
    yes_no = {DATASETS["dvqa"].random_answer("dvqa", dvqa_doc, rng) for _ in range(50)}
    assert yes_no == {"yes", "no"}
    colours = {DATASETS["tdiuc"].random_answer("tdiuc", {"question_type": "color"}, rng) for _ in range(300)}
    assert colours <= set(TDIUC_ANSWER_SPACES["color"]) | {"doesnotapply"}
    assert get_benchmark("tdiuc").loaded.random_answer is DATASETS["tdiuc"].random_answer


# --- the prepared folder ------------------------------------------------------------------------------------


def test_the_full_task_reads_the_prepared_folder(tmp_path, monkeypatch) -> None:
    from datasets import Dataset

    placeholder = Dataset.from_dict({"pack_stand_in": ["the prepared folder"]})  # as the YAML
    monkeypatch.delenv(env_var("dvqa"), raising=False)
    monkeypatch.delenv("LMMS_EVAL_TASKS_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="lmms-eval-tasks prepare dvqa"):
        dvqa_hooks.HOOKS.process_docs_for("dvqa")(placeholder)
    # prepare a real folder from the sample's charts, then the task's documents are those rows
    images = tmp_path / "images"
    images.mkdir()
    entries = []
    for row in dvqa_sample.rows():
        (images / row["image_file"]).write_bytes(row["image"]["bytes"])
        entry = {key: value for key, value in row.items() if key not in ("image", "image_file")}
        entries.append({**entry, "image": row["image_file"]})
    annotations = tmp_path / "DVQA_sampling.json"
    annotations.write_text(json.dumps(entries))
    preparers()["dvqa"].prepare(annotations, images, tmp_path / "prepared", progress=False)
    monkeypatch.setenv(env_var("dvqa"), str(tmp_path / "prepared"))
    docs = dvqa_hooks.HOOKS.process_docs_for("dvqa")(placeholder)
    assert docs.num_rows == len(entries)
    assert docs[0]["pack_task"] == "dvqa" and docs[0]["answer"] == entries[0]["answer"]
    # the sample task ignores the prepared folder and checks its own columns
    with pytest.raises(ValueError, match="dvqa_sample: the dataset has no 'question_id', 'question'"):
        dvqa_hooks.HOOKS.process_docs_for("dvqa_sample")(placeholder)


# --- bundled samples: the pictures show what the answers say ---------------------------------------------


def _image(row: dict) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(row["image"]["bytes"])).convert("RGB"))


def _blobs(pixels: np.ndarray, colour: tuple[int, int, int]) -> int:
    from scipy import ndimage

    mask = np.all(pixels == np.array(colour, dtype=pixels.dtype), axis=-1)
    return int(ndimage.label(mask)[1])


def test_tallyqa_sample_scenes_hold_the_counted_shapes() -> None:
    rows = tallyqa_sample.rows()
    by_image = {row["image_id"]: row for row in rows}
    for image_id, (shapes, _questions) in enumerate(tallyqa_sample.SCENES):
        pixels = _image(by_image[image_id])
        per_colour: dict[str, int] = {}
        for _kind, colour, count in shapes:
            per_colour[colour] = per_colour.get(colour, 0) + count
        for colour, expected in per_colour.items():
            assert _blobs(pixels, sample_data.COLOURS[colour]) == expected, (image_id, colour)
    answers = [row["answer"] for row in rows]
    simple = {min(row["answer"], 4) for row in rows if row["issimple"]}
    complex_ = {min(row["answer"], 4) for row in rows if not row["issimple"]}
    assert simple == complex_ == {0, 1, 2, 3, 4}  # every macro bucket in both splits
    assert max(answers) == 7


def test_dvqa_sample_bars_have_the_asked_values() -> None:
    blue = np.array(sample_data.COLOURS["blue"], dtype=np.uint8)
    for chart, values in enumerate(dvqa_sample.CHARTS):
        row = next(row for row in dvqa_sample.rows() if row["image_file"] == f"bar_sample_{chart:02d}.png")
        mask = np.all(_image(row) == blue, axis=-1)
        columns = np.flatnonzero(mask.any(axis=0))
        runs = np.split(columns, np.flatnonzero(np.diff(columns) > 1) + 1)
        heights = [int(mask[:, run].any(axis=1).sum()) for run in runs]
        assert len(heights) == len(values)
        tallest = max(values.values())
        for height, value in zip(heights, values.values(), strict=True):
            assert height / max(heights) == pytest.approx(value / tallest, abs=0.03)
    answers = {row["question"]: row["answer"] for row in dvqa_sample.rows()}
    assert answers["What is the value of gloom?"] == "0.5"
    assert answers["What is the sum of the values of apple and box?"] == "30"


def test_tdiuc_sample_covers_absurd_synonym_and_multi_word_labels() -> None:
    from lmms_eval_tasks.tasks.tdiuc import scoring as tdiuc

    rows = tdiuc_sample.rows()
    assert sum(row["question_type"] == "absurd" for row in rows) == 3
    assert all(row["labeled_answer"] == "doesnotapply" for row in rows if row["question_type"] == "absurd")
    pixels = _image(rows[0])
    assert tuple(pixels[112, 60]) == sample_data.COLOURS["red"]  # "What color is the circle?" -> red
    assert tuple(pixels[112, 164]) == sample_data.COLOURS["blue"]
    assert tdiuc.is_correct("phone", "telephone") and tdiuc.is_correct("teddy", "teddy bear")
    assert not tdiuc.is_correct("teddy", "teddy bear", "official")


@pytest.mark.parametrize(
    ("benchmark", "module", "label_field"),
    [
        ("tdiuc", tdiuc_sample, "labeled_answer"),
        ("tallyqa", tallyqa_sample, "answer"),
        ("dvqa", dvqa_sample, "answer"),
    ],
)
def test_a_model_answering_the_labels_scores_100_on_each_sample(benchmark, module, label_field) -> None:
    records = [
        {**{key: value for key, value in row.items() if key != "image"}, "prediction": str(row[label_field])}
        for row in module.rows()
    ]
    metrics = get_benchmark(benchmark).score(records)[0]
    for key in get_benchmark(benchmark).headline_metrics:
        expected = 0.0 if key.endswith("rmse") or key == "unparsed" else 100.0
        assert metrics[key] == pytest.approx(expected), key
