"""``load_rgb``, the one image loader of every ``doc_to_visual``: 8-bit RGB (16-bit/float scaled, alpha
over white, first frame), a bad or over-large image a one-line ``RecordError`` (docs/architecture.md)."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError

WHITE = (255, 255, 255)
_STRICT = threading.Lock()  # PIL's LOAD_TRUNCATED_IMAGES is process-wide: one strict decode at a time
_HEADER = threading.Lock()  # PIL's MAX_IMAGE_PIXELS is process-wide: one header read without it at a time
_ALPHA_MODES = ("RGBA", "LA", "PA", "RGBa", "La")
_KEYED_MODES = ("P", "RGB", "L")  # modes whose transparency is one colour named in ``info``


def _open(value: Any) -> Any:
    """A PIL image from what a row holds (not yet decoded; PIL reads the header only)."""
    from PIL import Image

    if isinstance(value, Image.Image):
        return value
    if isinstance(value, dict):  # an HF Image cell: its bytes, else its path
        value = value.get("bytes") or value.get("path")
        if not value:
            raise ValueError("the image holds neither bytes nor a path")
    if isinstance(value, bytes | bytearray):
        return Image.open(io.BytesIO(bytes(value)))
    if isinstance(value, str | os.PathLike):
        return Image.open(value)
    raise TypeError(f"expected an image, got {type(value).__name__}")


def _flatten(image: Any) -> Any:
    """``image`` (alpha or transparent palette) composited over white, as RGB."""
    from PIL import Image

    rgba = image.convert("RGBA")
    background = Image.new("RGBA", rgba.size, WHITE + (255,))
    return Image.alpha_composite(background, rgba).convert("RGB")


def to_rgb(image: Any) -> Any:
    """A decoded PIL image as 8-bit RGB (each mode: the module docstring); ValueError when it cannot be."""
    from lmms_eval_tasks.corruptions.engine import to_rgb_image

    mode = image.mode
    keyed = mode in _KEYED_MODES and "transparency" in image.info  # a PNG tRNS colour key, a GIF index
    if mode == "RGB" and not keyed:
        return image
    if mode in _ALPHA_MODES or keyed:
        return _flatten(image)
    if mode == "P":
        return image.convert("RGB")
    return to_rgb_image(image)  # I;16*, I, F scaled (others refused); 1, L, CMYK, YCbCr through PIL


@contextmanager
def _pil_setting(lock: threading.Lock, owner: Any, name: str, value: Any) -> Iterator[None]:
    """Within the block, the process-wide PIL setting ``owner.name`` is ``value`` (one block at a time)."""
    with lock:
        saved = getattr(owner, name)
        setattr(owner, name, value)
        try:
            yield
        finally:
            setattr(owner, name, saved)


def strict_decoding() -> AbstractContextManager[None]:
    """Within the block a truncated file is an error: lmms-eval turns PIL's ``LOAD_TRUNCATED_IMAGES`` on when
    imported, which fills a cut file's missing part with grey and says nothing."""
    from PIL import ImageFile

    return _pil_setting(_STRICT, ImageFile, "LOAD_TRUNCATED_IMAGES", False)


def load_rgb(value: Any, row: str | int, field: str = "image", *, exif_transpose: bool = False) -> Any:
    """The image in a dataset row as an 8-bit RGB PIL image, or a one-line ``RecordError`` naming ``row`` and
    ``field``; ``exif_transpose``: apply the EXIF orientation (where the official loader does)."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    from lmms_eval_tasks.corruptions.engine import MAX_PIXELS_ENV, max_pixels_limit

    if value is None:
        raise RecordError(row, field, "missing (null)")
    limit = max_pixels_limit()
    raise_it = f"raise it with {MAX_PIXELS_ENV}=N, 0 = no limit, or downscale the image"
    try:  # without PIL's decompression-bomb check (which libraries change): the pack's limit is checked next
        with _pil_setting(_HEADER, Image, "MAX_IMAGE_PIXELS", None):
            image = _open(value)
    except Exception as error:  # PIL raises UnidentifiedImageError, OSError, SyntaxError... on bad files
        if isinstance(error, UnidentifiedImageError):  # its text names a buffer: '<_io.BytesIO ...>'
            error = UnidentifiedImageError("not an image format PIL can read")
        raise RecordError(row, field, f"cannot be decoded ({type(error).__name__}: {error})") from None
    width, height = image.size
    if width < 1 or height < 1 or (limit and width * height > limit):
        bound = f"{limit:,}" if limit else "no limit"
        raise RecordError(
            row,
            field,
            f"image is {width}x{height} = {width * height:,} pixels, outside 1..{bound} "
            f"(the corruption engine's limit; {raise_it})",
        )
    try:
        if getattr(image, "n_frames", 1) > 1:
            image.seek(0)  # an animated image: its first frame
        with strict_decoding():
            image.load()
        if exif_transpose:
            image = ImageOps.exif_transpose(image)
        rgb = to_rgb(image)
        if rgb is image:
            rgb = image.copy()  # detached from the file (and from an animation's later frames)
    except Image.DecompressionBombError as error:  # an animation's frame larger than PIL's limit
        raise RecordError(row, field, f"image is too large ({error}; {raise_it})") from None
    except Exception as error:  # a truncated file fails when its pixels are read
        raise RecordError(row, field, f"cannot be decoded ({type(error).__name__}: {error})") from None
    return rgb
