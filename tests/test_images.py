"""The one image loader (``framework.images.load_rgb``): a generated file of every mode PIL reads comes out
as the RGB the model should see, and a broken or absurd image is one line naming the row.

The last tests go through a benchmark's real ``process_docs`` and ``doc_to_visual`` on a parquet file
(``datasets`` Image column), as the issue's 16-bit and undecodable images did.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from lmms_eval_tasks.framework.images import load_rgb
from lmms_eval_tasks.framework.input_checks import RecordError


def _encoded(image: Image.Image, fmt: str = "PNG", **options) -> dict:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return {"bytes": buffer.getvalue(), "path": None}


def _rgb(value, **options) -> np.ndarray:
    image = load_rgb(value, "row-7", **options)
    assert image.mode == "RGB"
    return np.asarray(image)


def test_16_bit_grey_is_scaled_not_clipped_to_white() -> None:
    values = np.full((4, 6), 30000, dtype=np.uint16)  # 30000 / 257 = 116.7 -> 117
    source = _encoded(Image.fromarray(values))
    assert Image.open(io.BytesIO(source["bytes"])).convert("RGB").getpixel((0, 0)) == (255, 255, 255)
    assert (_rgb(source) == 117).all()


def test_32_bit_integer_image_in_16_bit_range() -> None:
    values = np.full((4, 6), 65535, dtype=np.int32)
    assert (_rgb(Image.fromarray(values, mode="I")) == 255).all()
    assert (_rgb(Image.fromarray(np.full((4, 6), 257, dtype=np.int32), mode="I")) == 1).all()


def test_float_image_in_unit_range_and_out_of_range_refused() -> None:
    assert (_rgb(Image.fromarray(np.full((4, 6), 0.5, dtype=np.float32), mode="F")) == 128).all()  # 127.5
    with pytest.raises(RecordError, match=r"record row-7: field 'image': .*\[0, 1\]"):
        load_rgb(Image.fromarray(np.full((4, 6), 3.0, dtype=np.float32), mode="F"), "row-7")


def test_cmyk_jpeg() -> None:
    cmyk = Image.new("CMYK", (8, 8), (0, 255, 255, 0))  # no black, full magenta and yellow: red
    red, green, blue = _rgb(_encoded(cmyk, "JPEG", quality=100))[0, 0]
    assert red > 240 and green < 15 and blue < 15


def test_palette_with_transparency_is_composited_over_white() -> None:
    palette = Image.new("P", (4, 4), 0)
    palette.putpalette([0, 0, 0, 200, 10, 10] + [0] * 762)
    palette.putpixel((1, 1), 1)
    source = _encoded(palette, transparency=0)  # index 0 (black) transparent
    assert Image.open(io.BytesIO(source["bytes"])).convert("RGB").getpixel((0, 0)) == (0, 0, 0)
    pixels = _rgb(source)
    assert tuple(pixels[0, 0]) == (255, 255, 255)
    assert tuple(pixels[1, 1]) == (200, 10, 10)


def test_an_rgb_or_grey_png_with_a_transparent_colour_key_is_composited_over_white() -> None:
    # a PNG tRNS chunk names one colour as fully transparent; convert("RGB") shows that colour
    rgb = Image.fromarray(np.array([[[0, 0, 0], [10, 20, 30]]] * 2, dtype=np.uint8))
    source = _encoded(rgb, transparency=(0, 0, 0))
    assert Image.open(io.BytesIO(source["bytes"])).convert("RGB").getpixel((0, 0)) == (0, 0, 0)
    assert _rgb(source).tolist() == [[[255, 255, 255], [10, 20, 30]]] * 2
    grey = Image.fromarray(np.array([[0, 100], [0, 100]], dtype=np.uint8))
    assert _rgb(_encoded(grey, transparency=0)).tolist() == [[[255] * 3, [100] * 3]] * 2
    plain = Image.fromarray(np.array([[[0, 0, 0], [10, 20, 30]]] * 2, dtype=np.uint8))
    assert _rgb(_encoded(plain)).tolist() == [[[0, 0, 0], [10, 20, 30]]] * 2  # no key: unchanged


def test_every_mode_matches_a_numpy_reference() -> None:
    """Pixel for pixel against the conversion written out in numpy (random data, all values)."""
    rng = np.random.default_rng(30)
    full = rng.integers(0, 65536, (16, 16), dtype=np.uint16)  # 16-bit, full range
    narrow = rng.integers(0, 4096, (16, 16), dtype=np.uint16)  # 12 significant bits: stays dark (v/257)
    for grey16 in (full, narrow):
        expected = np.repeat(np.round(grey16 / 257).astype(np.uint8)[..., None], 3, axis=2)
        assert (_rgb(_encoded(Image.fromarray(grey16))) == expected).all()
    rgba = rng.integers(0, 256, (8, 8, 4), dtype=np.uint8)
    alpha = rgba[..., 3:] / 255.0
    over_white = np.round(rgba[..., :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
    assert (_rgb(_encoded(Image.fromarray(rgba, "RGBA"))) == over_white).all()
    cmyk = rng.integers(0, 256, (8, 8, 4), dtype=np.uint8)
    naive = (255 - cmyk[..., :3].astype(int)) * (255 - cmyk[..., 3:].astype(int)) / 255
    assert (_rgb(_encoded(Image.fromarray(cmyk, "CMYK"), "TIFF")) == np.round(naive)).all()
    ones = rng.integers(0, 2, (8, 8)).astype(bool)
    assert (_rgb(_encoded(Image.fromarray(ones))) == np.repeat(ones[..., None] * 255, 3, axis=2)).all()
    plain = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
    assert (_rgb(_encoded(Image.fromarray(plain))) == plain).all()  # ordinary RGB: byte-identical


def test_grey_with_alpha_and_rgba() -> None:
    grey_alpha = Image.new("LA", (4, 4), (50, 0))  # fully transparent grey
    assert (_rgb(_encoded(grey_alpha)) == 255).all()
    half = Image.new("RGBA", (4, 4), (0, 0, 0, 128))  # half-transparent black over white
    assert (_rgb(_encoded(half)) == 127).all()
    opaque = Image.new("RGBA", (4, 4), (10, 20, 30, 255))
    assert tuple(_rgb(_encoded(opaque))[2, 2]) == (10, 20, 30)


def test_animated_image_gives_its_first_frame() -> None:
    frames = [Image.new("RGB", (6, 6), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:], duration=50, loop=0)
    opened = Image.open(io.BytesIO(buffer.getvalue()))
    opened.seek(1)  # a decoded image left on a later frame
    assert tuple(_rgb(opened)[0, 0]) == (255, 0, 0)
    assert tuple(_rgb({"bytes": buffer.getvalue()})[0, 0]) == (255, 0, 0)


def test_exif_orientation_only_when_the_benchmark_applies_it() -> None:
    image = Image.new("RGB", (8, 4), (0, 0, 0))
    image.putpixel((0, 0), (255, 255, 255))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    source = _encoded(image, exif=exif.tobytes())
    assert _rgb(source).shape == (4, 8, 3)
    assert _rgb(source, exif_transpose=True).shape == (8, 4, 3)


def test_one_bit_and_grey() -> None:
    assert (_rgb(Image.new("1", (3, 3), 1)) == 255).all()
    assert (_rgb(_encoded(Image.new("L", (3, 3), 77))) == 77).all()


def test_undecodable_missing_and_absurd_images_name_the_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from PIL import ImageFile

    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)  # as lmms-eval sets it when imported
    with pytest.raises(
        RecordError, match=r"^record row-7: field 'image': cannot be decoded \(Unidentified"
    ) as caught:
        load_rgb({"bytes": b"<html>not an image</html>", "path": None}, "row-7")
    assert "BytesIO" not in str(caught.value) and " at 0x" not in str(caught.value)  # no buffer's repr
    truncated = _encoded(Image.new("RGB", (64, 64), (9, 9, 9)))["bytes"][:80]
    with pytest.raises(RecordError, match=r"^record row-7: field 'image': cannot be decoded"):
        load_rgb({"bytes": truncated}, "row-7")
    with pytest.raises(RecordError, match=r"^record row-7: field 'image': missing"):
        load_rgb(None, "row-7")
    monkeypatch.setenv("LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS", "100")
    with pytest.raises(
        RecordError, match=r"image is 20x20 = 400 pixels, outside 1..100 .*CORRUPT_MAX_PIXELS"
    ):
        load_rgb(_encoded(Image.new("RGB", (20, 20))), "row-7")


def test_the_pack_pixel_limit_replaces_pil_decompression_bomb_check(monkeypatch: pytest.MonkeyPatch) -> None:
    # PIL refused an image above its own MAX_IMAGE_PIXELS as "cannot be decoded (DecompressionBombWarning"
    # whatever the pack's limit said (0 = no limit did not lift it); libraries change PIL's value on import
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)
    source = _encoded(Image.new("RGB", (20, 20), (1, 2, 3)))  # 400 pixels: a "bomb" for PIL here
    monkeypatch.setenv("LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS", "0")
    assert _rgb(source).shape == (20, 20, 3)
    monkeypatch.setenv("LMMS_EVAL_TASKS_CORRUPT_MAX_PIXELS", "300")
    with pytest.raises(RecordError, match=r"field 'image': image is 20x20 = 400 pixels, outside 1..300 "):
        load_rgb(source, "row-7")
    assert Image.MAX_IMAGE_PIXELS == 100  # PIL's own setting is left as it was


def test_big_endian_16_bit_grey_tiff() -> None:
    # a 16-bit TIFF in Motorola byte order opens as I;16B (a scanner's or microscope's file)
    values = np.full((4, 6), 30000, dtype=">u2")
    big_endian = Image.frombytes("I;16B", (6, 4), values.tobytes())
    source = _encoded(big_endian, "TIFF")
    assert Image.open(io.BytesIO(source["bytes"])).mode == "I;16B"
    assert (_rgb(source) == 117).all()  # 30000 / 257 = 116.7


# ---- through a benchmark's process_docs and doc_to_visual, on a parquet Image column ----------------------


def _hallusionbench_docs(image_bytes: bytes):
    """The bundled HallusionBench sample, its first image question's image replaced, through process_docs."""
    from datasets import load_dataset

    from lmms_eval_tasks.tasks.hallusionbench import task_docs
    from lmms_eval_tasks.tasks.hallusionbench.hooks import SAMPLE_NON_IMAGE

    path = SAMPLE_NON_IMAGE.parent / "image.parquet"
    dataset = load_dataset("parquet", data_files=str(path), split="train").cast_column(
        "image", __import__("datasets").Image(decode=False)
    )
    first = next(i for i, row in enumerate(dataset["visual_input"]) if row != "0")

    def replace(row, index):
        if index == first:
            row["image"] = {"bytes": image_bytes, "path": None}
        return row

    from datasets import Image as ImageFeature

    dataset = dataset.map(replace, with_indices=True).cast_column("image", ImageFeature())
    return task_docs.process_docs_hallusionbench_sample(dataset), first


def test_a_16_bit_png_in_a_parquet_reaches_the_model_grey_not_white() -> None:
    from lmms_eval_tasks.tasks.hallusionbench.hooks import doc_to_visual

    png = _encoded(Image.fromarray(np.full((16, 16), 20000, dtype=np.uint16)))["bytes"]
    docs, first = _hallusionbench_docs(png)
    (image,) = doc_to_visual(docs[first])
    assert image.mode == "RGB" and (np.asarray(image) == 78).all()  # 20000 / 257 = 77.8


def test_an_undecodable_image_in_a_parquet_is_one_line_naming_the_question() -> None:
    from lmms_eval_tasks.tasks.hallusionbench.hooks import doc_to_visual

    docs, first = _hallusionbench_docs(b"GIF89a-broken")
    with pytest.raises(RecordError) as caught:
        doc_to_visual(docs[first])
    message = str(caught.value)
    assert "\n" not in message and "field 'image': cannot be decoded" in message
    assert message.startswith("record VD_"), message  # the official question key
