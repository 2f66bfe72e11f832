"""`prepare vqdv1`: the slim annotation file + COCO images -> the dataset the `vqdv1` task loads."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework.preparing import env_var, load_prepared, preparers


def _jpeg(size=(64, 48)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (20, 120, 200)).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def _entry(question_id: int, image_id: int, gtbox) -> dict:
    return {
        "question": "Show the bus in the picture.",
        "gtbox": gtbox,
        "question_type": "simple",
        "question_id": question_id,
        "image_id": image_id,
        "width": 64,
        "height": 48,
        "file_name": f"COCO_val2014_{image_id:012d}.jpg",
        "split": "val",
    }


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """Image 1 fine (two queries: one box, no box), image 2 missing, image 3 a truncated JPEG."""
    folder = tmp_path / "coco" / "val2014"
    folder.mkdir(parents=True)
    (folder / "COCO_val2014_000000000001.jpg").write_bytes(_jpeg())
    whole = _jpeg(size=(256, 256))
    (folder / "COCO_val2014_000000000003.jpg").write_bytes(whole[: len(whole) // 2])
    entries = [_entry(0, 1, [[1, 2, 30, 20]]), _entry(1, 1, [[]])]
    entries += [_entry(2, 2, [[0, 0, 5, 5]]), _entry(3, 3, [[]])]
    annotations = tmp_path / "VQDv1_sampling.json"
    annotations.write_text(json.dumps(entries), encoding="utf-8")
    return annotations, tmp_path / "coco"


def _prepare(annotations: Path, images: Path, out: Path, *extra: str) -> int:
    return main(["prepare", "vqdv1", "--annotations", str(annotations), "--images", str(images),
                 "--out", str(out), "--quiet", *extra])  # fmt: skip


def test_vqdv1_is_a_prepare_kind() -> None:
    assert "vqdv1" in preparers()
    assert env_var("vqdv1") == "LMMS_EVAL_TASKS_DATA_VQDV1"


def test_missing_and_corrupt_images_are_named(files, tmp_path, capsys) -> None:
    annotations, images = files
    assert _prepare(annotations, images, tmp_path / "out") == 1
    error = capsys.readouterr().err
    assert "COCO_val2014_000000000002.jpg" in error and "COCO_val2014_000000000003.jpg" in error


def test_skip_missing_writes_the_dataset_the_task_loads(files, tmp_path, monkeypatch, capsys) -> None:
    annotations, images = files
    out = tmp_path / "out"
    assert _prepare(annotations, images, out, "--skip-missing") == 0
    assert "skipped 2 questions" in capsys.readouterr().err
    monkeypatch.setenv(env_var("vqdv1"), str(out))
    dataset = load_prepared("vqdv1")
    assert dataset["question_id"] == [0, 1]
    assert dataset["gtbox"] == [[[1.0, 2.0, 30.0, 20.0]], [[]]]
    assert dataset[0]["image"].size == (64, 48)


def test_bad_ground_truth_names_the_entry_and_field(tmp_path, files) -> None:
    _, images = files
    annotations = tmp_path / "bad.json"
    annotations.write_text(json.dumps([_entry(0, 1, [[1, 2, 3]])]), encoding="utf-8")
    with pytest.raises(Exception, match=r"record 0.*'gtbox'"):
        preparers()["vqdv1"].prepare(annotations, images, tmp_path / "out", progress=False)
