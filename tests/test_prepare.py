"""`prepare`: annotation file + image folder -> dataset on disk; missing and corrupt images named."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework.preparing import PreparationError, env_var, load_prepared, preparers


def jpeg_bytes(colour=(200, 30, 30), size=(64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def tdiuc_entry(question_id: int, image_id: int, answer: str = "red") -> dict:
    return {
        "index": question_id,
        "question_id": question_id,
        "question": "What color is the bus?",
        "image_id": image_id,
        "labeled_answer": answer,
        "question_type": "color",
    }


@pytest.fixture
def tdiuc_files(tmp_path: Path) -> tuple[Path, Path]:
    """Three questions: image 1 fine, image 2 missing, image 3 a truncated JPEG (corrupt)."""
    images = tmp_path / "coco" / "val2014"
    images.mkdir(parents=True)
    (images / "COCO_val2014_000000000001.jpg").write_bytes(jpeg_bytes())
    whole = jpeg_bytes(size=(256, 256))
    (images / "COCO_val2014_000000000003.jpg").write_bytes(whole[: len(whole) // 2])
    annotations = tmp_path / "TDIUC_sampling.json"
    annotations.write_text(
        json.dumps([tdiuc_entry(10, 1), tdiuc_entry(20, 2), tdiuc_entry(30, 3), tdiuc_entry(31, 3)]),
        encoding="utf-8",
    )
    return annotations, tmp_path / "coco"


def test_kinds_are_registered_from_the_benchmark_packages() -> None:
    assert {"tdiuc", "tallyqa", "dvqa"} <= set(preparers())


def test_missing_and_corrupt_images_are_named_and_refused(tdiuc_files, tmp_path, capsys) -> None:
    annotations, images = tdiuc_files
    out = tmp_path / "out"
    code = main(
        ["prepare", "tdiuc", "--annotations", str(annotations), "--images", str(images), "--out", str(out)]
    )
    error = capsys.readouterr().err
    assert code == 1
    assert "1 missing and 1 corrupt images" in error
    assert "COCO_val2014_000000000002.jpg: missing (question 20)" in error
    assert "val2014/COCO_val2014_000000000003.jpg: does not decode" in error
    assert "(question 30, 31)" in error
    assert not out.exists()


def test_skip_missing_writes_the_rest_with_a_count(tdiuc_files, tmp_path, capsys, monkeypatch) -> None:
    annotations, images = tdiuc_files
    out = tmp_path / "out"
    arguments = ["--annotations", str(annotations), "--images", str(images), "--out", str(out), "--quiet"]
    assert main(["prepare", "tdiuc", *arguments, "--skip-missing"]) == 0
    captured = capsys.readouterr()
    assert "skipped 3 questions (1 missing and 1 corrupt images)" in captured.err
    summary = json.loads(captured.out)
    assert summary["rows"] == 1 and summary["skipped_questions"] == 3
    manifest = json.loads((out / "lmms_eval_tasks_prepare.json").read_text())
    assert manifest["missing_images"] == ["COCO_val2014_000000000002.jpg"]
    assert manifest["corrupt_images"] == ["val2014/COCO_val2014_000000000003.jpg"]

    monkeypatch.setenv(env_var("tdiuc"), str(out))
    dataset = load_prepared("tdiuc")
    assert dataset.num_rows == 1
    row = dataset[0]
    assert row["question_id"] == 10 and row["labeled_answer"] == "red"
    assert row["image_file"] == "COCO_val2014_000000000001.jpg"
    assert row["image"].size == (64, 48)  # the bytes are embedded: decodes without the source folder
    # a second run into the same folder needs --overwrite
    assert main(["prepare", "tdiuc", *arguments, "--skip-missing"]) == 2
    assert "--overwrite" in capsys.readouterr().err


def test_skip_missing_with_no_usable_image_refuses(tmp_path) -> None:
    annotations = tmp_path / "a.json"
    annotations.write_text(json.dumps([tdiuc_entry(1, 5)]), encoding="utf-8")
    (tmp_path / "images").mkdir()
    with pytest.raises(PreparationError, match="COCO_val2014_000000000005.jpg: missing"):
        preparers()["tdiuc"].prepare(annotations, tmp_path / "images", tmp_path / "out", skip_missing=True)


def test_bad_annotation_fields_name_the_entry(tmp_path, capsys) -> None:
    annotations = tmp_path / "a.json"
    entries = [tdiuc_entry(1, 1), {**tdiuc_entry(2, 1), "question_type": "colour"}]
    annotations.write_text(json.dumps(entries), encoding="utf-8")
    (tmp_path / "images").mkdir()
    code = main(
        [
            "prepare",
            "tdiuc",
            "--annotations",
            str(annotations),
            "--images",
            str(tmp_path / "images"),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 1
    assert "record 1: field 'question_type': unknown TDIUC question type 'colour'" in capsys.readouterr().err


def test_load_prepared_without_configuration_says_how(monkeypatch) -> None:
    monkeypatch.delenv(env_var("tallyqa"), raising=False)
    monkeypatch.delenv("LMMS_EVAL_TASKS_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="lmms-eval-tasks prepare tallyqa"):
        load_prepared("tallyqa")


def test_tallyqa_and_dvqa_layouts(tmp_path, monkeypatch) -> None:
    # TallyQA: relative paths under the image root; the root may also be given through LMMS_EVAL_TASKS_DATA
    (tmp_path / "img" / "VG_100K_2").mkdir(parents=True)
    (tmp_path / "img" / "VG_100K_2" / "7.jpg").write_bytes(jpeg_bytes())
    tally = tmp_path / "test.json"
    tally.write_text(
        json.dumps(
            [
                {
                    "image": "VG_100K_2/7.jpg",
                    "image_id": 7,
                    "question": "How many dogs?",
                    "question_id": 1,
                    "answer": 2,
                    "issimple": True,
                    "data_source": "amt",
                }
            ]
        )
    )
    preparers()["tallyqa"].prepare(tally, tmp_path / "img", tmp_path / "data" / "tallyqa", progress=False)
    monkeypatch.delenv(env_var("tallyqa"), raising=False)
    monkeypatch.setenv("LMMS_EVAL_TASKS_DATA", str(tmp_path / "data"))
    row = load_prepared("tallyqa")[0]
    assert (row["answer"], row["issimple"], row["image_file"]) == (2, True, "VG_100K_2/7.jpg")
    # DVQA: images under images/ (the archive layout)
    (tmp_path / "dv" / "images").mkdir(parents=True)
    buffer = io.BytesIO()
    Image.new("RGB", (30, 20), (0, 0, 255)).save(buffer, format="PNG")
    (tmp_path / "dv" / "images" / "bar_val_easy_00000001.png").write_bytes(buffer.getvalue())
    dvqa = tmp_path / "dvqa.jsonl"
    dvqa.write_text(
        json.dumps(
            {
                "question": "What is the value of ink?",
                "question_id": 5,
                "template_id": "data",
                "answer": "0.5",
                "image": "bar_val_easy_00000001.png",
                "answer_bbox": [1, 2.5, 3, 4],
            }
        )
        + "\n"
    )
    preparers()["dvqa"].prepare(dvqa, tmp_path / "dv", tmp_path / "data" / "dvqa", progress=False)
    row = load_prepared("dvqa")[0]
    assert (row["answer"], row["answer_bbox"], row["image"].size) == ("0.5", [1.0, 2.5, 3.0, 4.0], (30, 20))
    with pytest.raises(ValueError, match="holds a prepared 'dvqa' dataset, not 'tallyqa'"):
        monkeypatch.setenv(env_var("tallyqa"), str(tmp_path / "data" / "dvqa"))
        load_prepared("tallyqa")
