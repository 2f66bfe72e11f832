"""16-bit and float PIL images are scaled to 8 bits (or refused), never clipped; a bad seed is a one-line
error."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.corruptions import CorruptionSpec, as_rgb_uint8, corrupt_visual, image_seed
from lmms_eval_tasks.corruptions.engine import to_rgb_image

SIDE = 32


def _ramp16() -> np.ndarray:
    """A 16-bit grey ramp whose rows hold 0, 128, 129, 257*100, 65535 (then repeat)."""
    values = np.array([0, 128, 129, 257 * 100, 65535], dtype=np.uint16)
    return np.resize(values, (SIDE, SIDE))


def test_pil_clips_16_bit_images_which_is_why_we_scale() -> None:
    # The bug being fixed: PIL's own conversion saturates everything above 255.
    clipped = np.asarray(Image.fromarray(_ramp16()).convert("RGB"))
    assert clipped[0, 3, 0] == 255


def test_16_bit_grey_is_divided_by_257_and_rounded() -> None:
    image = Image.fromarray(_ramp16())
    assert image.mode == "I;16"
    pixels = as_rgb_uint8(image)
    # 0/257 = 0, 128/257 = 0.498 -> 0, 129/257 = 0.502 -> 1, 25700/257 = 100, 65535/257 = 255
    assert pixels.shape == (SIDE, SIDE, 3) and pixels.dtype == np.uint8
    assert pixels[0, :5, 0].tolist() == [0, 0, 1, 100, 255]
    assert (pixels[..., 0] == pixels[..., 2]).all()


def test_32_bit_integer_image_in_16_bit_range_is_scaled_like_16_bit() -> None:
    image = Image.fromarray(_ramp16().astype(np.int32))
    assert image.mode == "I"
    assert as_rgb_uint8(image)[0, :5, 1].tolist() == [0, 0, 1, 100, 255]


def test_32_bit_integer_image_outside_16_bit_range_is_refused() -> None:
    values = np.full((SIDE, SIDE), 70000, dtype=np.int32)
    values[0, 0] = -5
    with pytest.raises(ValueError, match=r"'I' image with values -5\.\.70000: only 16-bit ranges"):
        as_rgb_uint8(Image.fromarray(values))


def test_float_image_in_unit_range_is_multiplied_by_255() -> None:
    values = np.resize(np.array([0.0, 0.5, 1.0, 0.1], dtype=np.float32), (SIDE, SIDE))
    image = Image.fromarray(values)
    assert image.mode == "F"
    # 0.5 * 255 = 127.5 -> 128 (np.rint: half to even); float32 0.1 is 0.1000000015, * 255 = 25.5000004 -> 26
    assert as_rgb_uint8(image)[0, :4, 0].tolist() == [0, 128, 255, 26]


@pytest.mark.parametrize(
    ("value", "shown"), [(2.0, "0..2"), (-0.5, "-0.5..0"), (float("nan"), "NaN or infinite values")]
)
def test_float_image_outside_unit_range_is_refused(value: float, shown: str) -> None:
    values = np.zeros((SIDE, SIDE), dtype=np.float32)
    values[3, 3] = value
    message = rf"float \('F'\) image with {shown}: float images must lie in \[0, 1\]"
    with pytest.raises(ValueError, match=message):
        to_rgb_image(Image.fromarray(values))


def test_eight_bit_modes_are_unchanged() -> None:
    grey = Image.fromarray(np.arange(SIDE * SIDE, dtype=np.uint8).reshape(SIDE, SIDE))
    assert np.array_equal(as_rgb_uint8(grey), np.asarray(grey.convert("RGB")))
    rgba = Image.new("RGBA", (SIDE, SIDE), (10, 20, 30, 40))
    assert as_rgb_uint8(rgba)[0, 0].tolist() == [10, 20, 30]


def test_a_16_bit_png_is_corrupted_from_its_scaled_pixels(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    Image.fromarray(np.full((SIDE, SIDE), 257 * 60, dtype=np.uint16)).save(buffer, format="PNG")
    data = buffer.getvalue()
    # brightness on a mid-grey image stays far below white (clipping made every pixel 255 first)
    corrupted = np.asarray(corrupt_visual(data, "brightness", 1, seed=0))
    assert corrupted.mean() < 150
    path = tmp_path / "deep.png"
    path.write_bytes(data)
    out = tmp_path / "out.png"
    assert main(["corrupt", "image", str(path), str(out), "--name", "brightness", "--severity", "1"]) == 0
    assert np.asarray(Image.open(out)).mean() < 150


@pytest.mark.parametrize("seed", ["-1", str(2**128)])
def test_corrupt_image_bad_seed_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: str
) -> None:
    path = tmp_path / "x.png"
    Image.new("RGB", (SIDE, SIDE)).save(path)
    argv = ["corrupt", "image", str(path), str(tmp_path / "y.png"), "--name", "gaussian_noise"]
    argv += ["--severity", "1"]
    assert main([*argv, "--seed", seed]) == 2
    error = capsys.readouterr().err.strip()
    assert error == f"error: seed must be a non-negative integer below 2**128, got {seed}"
    assert not (tmp_path / "y.png").exists()


def test_seed_is_checked_by_every_entry_point() -> None:
    image = Image.new("RGB", (SIDE, SIDE))
    for call in (
        lambda: image_seed(-1, image),
        lambda: corrupt_visual(image, "gaussian_noise", 1, seed=-1),
        lambda: CorruptionSpec("gaussian_noise", 1, seed=-1),
    ):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            call()
    assert image_seed(2**128 - 1, image) >= 0
