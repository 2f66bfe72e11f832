"""Corruptions per dataset: spec records, lazy and materialised copies, caching, CLI, determinism."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.cli.corrupt import corrupt_cli
from lmms_eval_tasks.corruptions import (
    PROFILES,
    CorruptionSpec,
    corrupt,
    corrupt_visual,
    corruption_names,
    materialize,
)
from lmms_eval_tasks.corruptions.dataset import image_seed, with_corruption


def _images(count: int = 5) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    images = [rng.integers(0, 256, (24 + 4 * index, 32, 3), dtype=np.uint8) for index in range(count)]
    if count > 1:
        images.append(images[1].copy())  # the same picture twice (two questions on one image)
    return images


@pytest.fixture()
def image_dataset():  # noqa: ANN201
    import datasets

    images = _images()
    return datasets.Dataset.from_dict(
        {"image": [Image.fromarray(image) for image in images], "question_id": list(range(len(images)))},
        features=datasets.Features({"image": datasets.Image(), "question_id": datasets.Value("int64")}),
    )


def test_spec_validates_and_records_itself() -> None:
    spec = CorruptionSpec("zoom_blur", 3, seed=42, profile="imagenet_c")
    record = spec.to_dict()
    assert record["name"] == "zoom_blur" and record["severity"] == 3 and record["seed"] == 42
    assert record["profile"] == "imagenet_c"
    assert record["parameters"] == [1.0, 1.21, 0.02]
    assert json.loads(json.dumps(record)) == record
    assert CorruptionSpec.from_dict(record) == spec
    assert CorruptionSpec("grayscale", 4).to_dict()["severity_independent"] is True
    with pytest.raises(ValueError, match="severity"):
        CorruptionSpec("zoom_blur", 0)
    with pytest.raises(ValueError, match="unknown corruption 'frost' for profile 'vrb'"):
        CorruptionSpec("frost", 1)
    with pytest.raises(ValueError, match="seed"):
        CorruptionSpec("zoom_blur", 1, seed=-3)
    with pytest.raises(KeyError, match="severity"):
        CorruptionSpec.from_dict({"name": "zoom_blur"})


def test_corrupt_visual_seeds_per_image() -> None:
    first, second = _images(3)[:2]
    out = corrupt_visual(Image.fromarray(first), "gaussian_noise", 2, seed=9)
    assert isinstance(out, Image.Image) and out.mode == "RGB"
    expected = corrupt(first, "gaussian_noise", 2, seed=image_seed(9, first), profile="vrb")
    assert np.array_equal(np.asarray(out), expected)
    # Same pixels -> same corruption whatever the container; other pixels -> other noise.
    assert np.array_equal(np.asarray(corrupt_visual(first, "gaussian_noise", 2, seed=9)), expected)
    other = corrupt_visual(second[: first.shape[0]], "gaussian_noise", 2, seed=9)
    noise_a = np.asarray(out).astype(int) - first
    noise_b = np.asarray(other).astype(int) - second[: first.shape[0]]
    assert not np.array_equal(noise_a, noise_b)
    buffer = __import__("io").BytesIO()
    Image.fromarray(first).save(buffer, "PNG")
    from_bytes = corrupt_visual({"bytes": buffer.getvalue(), "path": None}, "gaussian_noise", 2, seed=9)
    assert np.array_equal(np.asarray(from_bytes), expected)


def test_wrap_doc_to_visual() -> None:
    spec = CorruptionSpec("contrast", 5, seed=1)
    images = _images(2)
    hook = spec.wrap_doc_to_visual(lambda doc: [Image.fromarray(images[index]) for index in doc["ids"]])
    visuals = hook({"ids": [0, 1]})
    assert len(visuals) == 2
    assert np.array_equal(np.asarray(visuals[1]), np.asarray(spec.apply(images[1])))


def test_materialize_matches_lazy_and_is_worker_independent(image_dataset, tmp_path: Path) -> None:  # noqa: ANN001
    spec = CorruptionSpec("speckle_noise", 4, seed=5, profile="imagenet_c")
    one = materialize(
        image_dataset, "image", "speckle_noise", 4, 5, "imagenet_c", num_proc=1, cache_dir=tmp_path / "a"
    )
    two = materialize(
        image_dataset, "image", "speckle_noise", 4, 5, "imagenet_c", num_proc=2, cache_dir=tmp_path / "b"
    )
    lazy = with_corruption(image_dataset, "image", spec)
    assert one.column_names == image_dataset.column_names and len(one) == len(image_dataset)
    for row in range(len(image_dataset)):
        from_one = np.asarray(one[row]["image"])
        assert np.array_equal(from_one, np.asarray(two[row]["image"]))
        assert np.array_equal(from_one, np.asarray(lazy[row]["image"]))
        assert np.array_equal(from_one, np.asarray(spec.apply(image_dataset[row]["image"])))
        assert one[row]["question_id"] == row
    # The duplicated picture (rows 1 and 5) is corrupted identically.
    assert np.array_equal(np.asarray(one[1]["image"]), np.asarray(one[5]["image"]))
    records = list((tmp_path / "a").rglob("corruption.json"))
    assert len(records) == 1
    assert json.loads(records[0].read_text())["name"] == "speckle_noise"


def test_materialize_reuses_its_cache(image_dataset, tmp_path: Path) -> None:  # noqa: ANN001
    first = materialize(image_dataset, "image", "jpeg_compression", 5, 0, "vrb", cache_dir=tmp_path)
    folder = next(tmp_path.rglob("corruption.json")).parent
    stamp = (folder / "corruption.json").stat().st_mtime_ns
    again = materialize(image_dataset, "image", "jpeg_compression", 5, 0, "vrb", cache_dir=tmp_path)
    assert (folder / "corruption.json").stat().st_mtime_ns == stamp
    assert str(folder) in again.cache_files[0]["filename"]
    assert np.array_equal(np.asarray(first[2]["image"]), np.asarray(again[2]["image"]))
    # A different seed is a different copy.
    materialize(image_dataset, "image", "jpeg_compression", 5, 1, "vrb", cache_dir=tmp_path)
    assert len(list(tmp_path.rglob("corruption.json"))) == 2
    with pytest.raises(KeyError, match="no column 'picture'"):
        materialize(image_dataset, "picture", "jpeg_compression", 5, cache_dir=tmp_path)


def test_materialize_dataset_dict(image_dataset, tmp_path: Path) -> None:  # noqa: ANN001
    import datasets

    splits = datasets.DatasetDict({"val": image_dataset, "test": image_dataset.select([0, 1])})
    out = materialize(splits, "image", "pixelate", 5, 0, "vrb", cache_dir=tmp_path)
    assert set(out) == {"val", "test"} and len(out["test"]) == 2
    assert np.asarray(out["val"][0]["image"]).shape == (3, 4, 3)  # VRB pixelate 0.15 of 24x32, downscale only


def test_cli_list_image_dataset_sheet(image_dataset, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:  # noqa: ANN001
    assert corrupt_cli(["list", "--profile", "imagenet_c", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["fog"][0] == [1.5, 2.0]

    source = tmp_path / "in.png"
    Image.fromarray(_images(1)[0]).save(source)
    assert (
        corrupt_cli(
            [
                "image",
                str(source),
                str(tmp_path / "out.png"),
                "--name",
                "fog",
                "--severity",
                "2",
                "--profile",
                "imagenet_c",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    expected = corrupt_visual(Image.open(source), "fog", 2, 3, "imagenet_c")
    assert np.array_equal(np.asarray(Image.open(tmp_path / "out.png")), np.asarray(expected))

    parquet = tmp_path / "data.parquet"
    image_dataset.to_parquet(str(parquet))
    capsys.readouterr()
    code = corrupt_cli(
        [
            "dataset",
            str(parquet),
            "--name",
            "contrast,grayscale",
            "--severity",
            "1,5",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0
    written = capsys.readouterr().out.split()
    assert len(written) == 4 and all(Path(path).is_dir() for path in written)
    import datasets

    saved = datasets.load_from_disk(str(tmp_path / "out" / "vrb" / "contrast" / "severity_5"))
    expected = corrupt_visual(image_dataset[3]["image"], "contrast", 5, 0, "vrb")
    assert np.array_equal(np.asarray(saved[3]["image"]), np.asarray(expected))

    assert corrupt_cli(["sheet", str(tmp_path / "sheet.png"), "--size", "48", "--tile", "32"]) == 0
    sheet = Image.open(tmp_path / "sheet.png")
    assert sheet.height > 32 * len(corruption_names("vrb")) and sheet.width > 32 * 6

    assert corrupt_cli(["dataset", str(parquet), "--name", "fogg", "--cache-dir", str(tmp_path)]) == 2
    assert "unknown corruption 'fogg'" in capsys.readouterr().err
    assert corrupt_cli(["dataset", str(tmp_path / "x.txt"), "--name", "fog", "--profile", "imagenet_c"]) == 2
    (tmp_path / "broken.png").write_bytes(b"not an image")
    capsys.readouterr()
    assert (
        corrupt_cli(
            [
                "image",
                str(tmp_path / "broken.png"),
                str(tmp_path / "o.png"),
                "--name",
                "fog",
                "--severity",
                "1",
                "--profile",
                "imagenet_c",
            ]
        )
        == 2
    )
    assert "cannot identify image file" in capsys.readouterr().err


def test_add_parser_hooks_into_a_parent_cli() -> None:
    import argparse

    from lmms_eval_tasks.cli.corrupt import register, run

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["corrupt", "list", "--profile", "vrb"])
    assert args.handler is run and args.corrupt_command == "list"


_HASH_SCRIPT = """
import hashlib, sys
import numpy as np
import cv2
cv2.setNumThreads(int(sys.argv[1]))
from lmms_eval_tasks.corruptions import PROFILES, corrupt, corruption_names
rng = np.random.default_rng(1)
image = rng.integers(0, 256, (45, 61, 3), dtype=np.uint8)
digest = hashlib.sha256()
for profile in PROFILES:
    for name in corruption_names(profile):
        digest.update(corrupt(image, name, 3, seed=17, profile=profile).tobytes())
print(digest.hexdigest())
"""


def _digest_here() -> str:
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (45, 61, 3), dtype=np.uint8)
    digest = hashlib.sha256()
    for profile in PROFILES:
        for name in corruption_names(profile):
            digest.update(corrupt(image, name, 3, seed=17, profile=profile).tobytes())
    return digest.hexdigest()


def test_byte_identical_across_processes_threads_and_opencv_threads() -> None:
    here = _digest_here()
    for threads in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-c", _HASH_SCRIPT, threads],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert result.stdout.strip() == here, threads
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert set(pool.map(lambda _: _digest_here(), range(4))) == {here}
