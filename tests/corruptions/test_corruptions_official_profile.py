"""Profile ``vrb_official``: the official VRB pipeline's JPEG artefacts, byte for byte; the pixel limit.

The references below replay the official pipeline with real files: ``cv2.imwrite`` (which takes arrays
as BGR and saves JPEG at quality 95 unless told otherwise) and ``imageio.v2.imread`` (how the official
``utils.loadImage`` reads every image, RGB order), exactly as ``generator.py`` / ``utils.py`` call them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import imageio.v2 as imageio
import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.cli.corrupt import corrupt_cli
from lmms_eval_tasks.corruptions import (
    PROFILES,
    SEVERITY_TABLES,
    CorruptionSpec,
    corrupt,
    corrupt_visual,
    corruption_names,
    materialize,
)
from lmms_eval_tasks.corruptions.engine import DEFAULT_MAX_PIXELS, MAX_PIXELS_ENV, max_pixels_limit

# Corruptions whose official definition differs from ``vrb`` beyond the saved file (tested separately).
OWN_DEFINITION = {"jpeg_compression", "grayscale", "grayscale_inverse"}


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    """A real photograph (scikit-image's astronaut), small enough for every corruption to be quick."""
    from skimage import data

    return cv2.resize(data.astronaut(), (80, 64), interpolation=cv2.INTER_AREA)


def _imwrite_imread(array: np.ndarray, path: Path, *params: int) -> np.ndarray:
    """``cv2.imwrite(path, array, params)`` then ``imageio.imread(path)``, as the official code does."""
    assert cv2.imwrite(str(path), array, list(params))
    return np.asarray(imageio.imread(path))


def _official_saved(rgb: np.ndarray, path: Path) -> np.ndarray:
    """What the official models read for a result the generator returned in BGR order (``BGR2RGB`` swap)."""
    return _imwrite_imread(cv2.cvtColor(rgb, cv2.COLOR_BGR2RGB), path)


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a.astype(float) - b.astype(float)) ** 2))
    return math.inf if mse == 0 else 10 * math.log10(255**2 / mse)


def test_the_profile_exists_everywhere_with_the_vrb_tables() -> None:
    assert "vrb_official" in PROFILES
    assert SEVERITY_TABLES["vrb_official"] == SEVERITY_TABLES["vrb"]
    assert corruption_names("vrb_official") == corruption_names("vrb")


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
def test_jpeg_compression_is_the_swapped_encode_then_the_saved_file(
    photo: np.ndarray, severity: int, tmp_path: Path
) -> None:
    quality = SEVERITY_TABLES["vrb"]["jpeg_compression"][severity - 1]
    # generator.transformToJpegCompression: cv2.imwrite of the RGB array (as if BGR), imageio read back ...
    temp = _imwrite_imread(photo, tmp_path / "parrot_saved.jpg", cv2.IMWRITE_JPEG_QUALITY, quality)
    # ... then utils.saveImage writes that array with cv2.imwrite (quality 95) and loadImage reads it.
    expected = _imwrite_imread(temp, tmp_path / "saved.jpg")
    out = corrupt(photo, "jpeg_compression", severity, seed=0, profile="vrb_official")
    assert out.dtype == np.uint8 and out.shape == photo.shape
    assert np.array_equal(out, expected)
    # The swapped encode is a real difference from the default profile's correct encode.
    correct = corrupt(photo, "jpeg_compression", severity, seed=0, profile="vrb")
    assert 20 < _psnr(_official_saved(correct, tmp_path / "c.jpg"), out) < 45


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", sorted(set(SEVERITY_TABLES["vrb"]) - OWN_DEFINITION))
def test_every_other_corruption_is_the_default_output_saved_as_q95_jpeg(
    photo: np.ndarray, name: str, severity: int, tmp_path: Path
) -> None:
    default = corrupt(photo, name, severity, seed=11, profile="vrb")
    expected = _official_saved(default, tmp_path / "COCO_val2014_000000000042.jpg")
    out = corrupt(photo, name, severity, seed=11, profile="vrb_official")
    assert np.array_equal(out, expected), name
    if name != "pixelate" or severity < 5:  # a 12x9 pixelate stays exact-ish; all others move
        assert not np.array_equal(out, default), name


def test_grey_uses_the_official_swapped_weights(photo: np.ndarray, tmp_path: Path) -> None:
    # generator.transformToGrayscale / ...Inverted on imageio's RGB array with COLOR_BGR2GRAY.
    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    expected = _imwrite_imread(cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR), tmp_path / "g.jpg")
    inverted = cv2.cvtColor(np.float32(255.0 - grey), cv2.COLOR_GRAY2BGR)
    expected_inverse = _imwrite_imread(inverted, tmp_path / "gi.jpg")
    for severity in (1, 5):
        assert np.array_equal(corrupt(photo, "grayscale", severity, seed=0, profile="vrb_official"), expected)
        assert np.array_equal(
            corrupt(photo, "grayscale_inverse", severity, seed=0, profile="vrb_official"), expected_inverse
        )
    red = np.zeros((32, 32, 3), np.uint8)
    red[..., 0] = 200
    assert corrupt(red, "grayscale", 1, seed=0, profile="vrb")[0, 0, 0] == 60  # 0.299 * 200
    assert abs(int(corrupt(red, "grayscale", 1, seed=0, profile="vrb_official")[5, 5, 0]) - 23) <= 1  # 0.114


def test_outputs_are_writable_and_deterministic(photo: np.ndarray) -> None:
    first = corrupt(photo, "snow", 3, seed=4, profile="vrb_official")
    assert first.flags.writeable and first.flags.c_contiguous
    assert np.array_equal(first, corrupt(photo, "snow", 3, seed=4, profile="vrb_official"))


def test_the_profile_is_recorded_and_cached_apart(tmp_path: Path) -> None:
    import datasets

    record = CorruptionSpec("jpeg_compression", 3, seed=0, profile="vrb_official").to_dict()
    assert record["profile"] == "vrb_official" and record["parameters"] == 15
    assert CorruptionSpec.from_dict(record).profile == "vrb_official"
    rng = np.random.default_rng(3)
    images = [rng.integers(0, 256, (24, 32, 3), dtype=np.uint8) for _ in range(2)]
    dataset = datasets.Dataset.from_dict(
        {"image": [Image.fromarray(image) for image in images]},
        features=datasets.Features({"image": datasets.Image()}),
    )
    copies = {
        profile: materialize(dataset, "image", "gaussian_noise", 2, 0, profile, cache_dir=tmp_path)
        for profile in ("vrb", "vrb_official")
    }
    folders = {profile: Path(copy.cache_files[0]["filename"]).parent for profile, copy in copies.items()}
    assert folders["vrb"] != folders["vrb_official"]
    for profile, copy in copies.items():
        assert json.loads((folders[profile] / "corruption.json").read_text())["profile"] == profile
        expected = np.asarray(corrupt_visual(dataset[0]["image"], "gaussian_noise", 2, 0, profile))
        assert np.array_equal(np.asarray(copy[0]["image"]), expected)
    assert not np.array_equal(
        np.asarray(copies["vrb"][0]["image"]), np.asarray(copies["vrb_official"][0]["image"])
    )


def test_cli_accepts_the_profile(tmp_path: Path, photo: np.ndarray, capsys: pytest.CaptureFixture) -> None:
    source, target = tmp_path / "in.png", tmp_path / "out.png"
    Image.fromarray(photo).save(source)
    argv = ["image", str(source), str(target), "--name", "jpeg_compression", "--severity", "5"]
    assert corrupt_cli([*argv, "--profile", "vrb_official", "--seed", "0"]) == 0
    expected = corrupt_visual(Image.open(source), "jpeg_compression", 5, 0, "vrb_official")
    assert np.array_equal(np.asarray(Image.open(target)), np.asarray(expected))
    assert corrupt_cli(["list", "--profile", "vrb_official", "--json"]) == 0
    assert "jpeg_compression" in capsys.readouterr().out


def test_vrb_tasks_use_and_record_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_eval_tasks.framework.dataset_contract import image_of
    from lmms_eval_tasks.tasks.vrb import config as vrb_config
    from lmms_eval_tasks.tasks.vrb import hooks, make_sample

    sample = hooks.Path(hooks.__file__).parent / "sample" / make_sample.SAMPLE_FILE
    docs = datasets_load(sample)
    task = "vrb_sample_gaussian_noise_s3"
    doc = hooks.HOOKS.process_docs_for(task)(docs)[0]
    monkeypatch.setenv(vrb_config.PROFILE_ENV, "vrb_official")
    seen = np.asarray(hooks.doc_to_visual(doc)[0])
    # rows reach the hooks with the image undecoded; decode it the way every hook does
    clean = np.asarray(image_of("vrb", doc, "image", doc["image_id"]))
    seed = hooks.image_seed(0, doc["image_id"])
    assert np.array_equal(seen, corrupt(clean, "gaussian_noise", 3, seed=seed, profile="vrb_official"))
    record = hooks.make_record(doc, ["2"], task)
    assert record["profile"] == "vrb_official"
    assert hooks.task_settings(task)["profile"] == "vrb_official"
    details = hooks.report_details([record], {}, task, None)  # run-only: the corruption the run applied
    assert details["corruption"]["profile"] == "vrb_official"  # the report's provenance.corruption


def datasets_load(path: Path):  # noqa: ANN201
    """The bundled VRB sample as a ``datasets.Dataset``."""
    from datasets import load_dataset

    return load_dataset("parquet", data_files=str(path), split="train")


# ----------------------------------------------------------------------------- pixel limit


def test_pixel_limit_refuses_with_one_line_naming_size_limit_and_remedy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(MAX_PIXELS_ENV, raising=False)
    assert max_pixels_limit() == DEFAULT_MAX_PIXELS == 4096 * 4096
    image = np.zeros((40, 50, 3), np.uint8)
    with pytest.raises(ValueError) as caught:
        corrupt(image, "contrast", 1, seed=0, max_pixels=1999)
    message = str(caught.value)
    assert "\n" not in message
    assert "40x50 = 2,000 pixels" in message and "limit of 1,999" in message
    assert "max_pixels=" in message and MAX_PIXELS_ENV in message
    # The largest accepted size still works (and gives the unlimited result).
    at_limit = corrupt(image, "contrast", 1, seed=0, max_pixels=2000)
    assert np.array_equal(at_limit, corrupt(image, "contrast", 1, seed=0, max_pixels=0))
    # PIL images are measured before they are converted.
    with pytest.raises(ValueError, match="40x50 = 2,000 pixels"):
        corrupt(Image.fromarray(image), "gaussian_noise", 2, seed=0, profile="vrb_official", max_pixels=1000)


def test_pixel_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    image = np.zeros((40, 50, 3), np.uint8)
    monkeypatch.setenv(MAX_PIXELS_ENV, "1999")
    with pytest.raises(ValueError, match=f"limit of 1,999.*{MAX_PIXELS_ENV}"):
        corrupt(image, "snow", 2, seed=0)
    with pytest.raises(ValueError, match="limit of 1,999"):
        corrupt_visual(image, "snow", 2, 0)  # the path the harness hooks and datasets take
    assert corrupt(image, "snow", 2, seed=0, max_pixels=2000).shape == image.shape  # keyword wins
    Image.fromarray(image).save(tmp_path / "big.png")
    argv = ["image", str(tmp_path / "big.png"), str(tmp_path / "o.png"), "--name", "snow", "--severity", "1"]
    assert corrupt_cli(argv) == 2  # one `error:` line, exit code 2
    monkeypatch.setenv(MAX_PIXELS_ENV, "2000")
    assert corrupt(image, "snow", 2, seed=0).shape == image.shape
    monkeypatch.setenv(MAX_PIXELS_ENV, "0")
    assert max_pixels_limit() == 0
    monkeypatch.setenv(MAX_PIXELS_ENV, "lots")
    with pytest.raises(ValueError, match=f"{MAX_PIXELS_ENV}='lots': expected a non-negative integer"):
        corrupt(image, "snow", 2, seed=0)
    with pytest.raises(ValueError, match="max_pixels=-1"):
        corrupt(image, "snow", 2, seed=0, max_pixels=-1)
