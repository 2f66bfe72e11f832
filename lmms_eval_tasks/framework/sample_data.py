"""Deterministic helpers for the bundled ``*_sample`` data: images drawn with Pillow's bitmap font (seeded),
parquet bytes with an HF ``Image`` column (what ``dataset_path: parquet`` loads; a test finds drift)."""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw, ImageFont

Colour = tuple[int, int, int]

WHITE: Colour = (255, 255, 255)
BLACK: Colour = (0, 0, 0)
GREY: Colour = (150, 150, 150)
COLOURS: dict[str, Colour] = {
    "red": (220, 40, 40),
    "green": (40, 170, 60),
    "blue": (40, 80, 220),
    "yellow": (235, 200, 30),
    "purple": (140, 60, 170),
    "orange": (240, 140, 30),
}
SHAPES = ("circle", "square", "triangle")


def bitmap_font() -> ImageFont.ImageFont:
    """Pillow's built-in bitmap font: identical glyphs everywhere (no FreeType rendering differences)."""
    loader = getattr(ImageFont, "load_default_imagefont", None)
    return loader() if loader is not None else ImageFont.load_default()


def canvas(width: int, height: int, background: Colour = WHITE) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """A new RGB image and its drawing context."""
    image = Image.new("RGB", (width, height), background)
    return image, ImageDraw.Draw(image)


def draw_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, fill: Colour = BLACK) -> None:
    """Write ``text`` at ``xy`` in the bitmap font."""
    draw.text(xy, text, fill=fill, font=bitmap_font())


def text_size(text: str) -> tuple[int, int]:
    """(width, height) in pixels of ``text`` in the bitmap font."""
    left, top, right, bottom = bitmap_font().getbbox(text)
    return right - left, bottom - top


def draw_shape(
    draw: ImageDraw.ImageDraw, kind: str, centre: tuple[float, float], radius: float, fill: Colour
) -> tuple[float, float, float, float]:
    """Draw a filled circle, square or triangle; returns its bounding box (x1, y1, x2, y2)."""
    centre_x, centre_y = centre
    box = (centre_x - radius, centre_y - radius, centre_x + radius, centre_y + radius)
    if kind == "circle":
        draw.ellipse(box, fill=fill)
    elif kind == "square":
        draw.rectangle(box, fill=fill)
    elif kind == "triangle":
        draw.polygon([(centre_x, box[1]), (box[2], box[3]), (box[0], box[3])], fill=fill)
    else:
        raise ValueError(f"unknown shape {kind!r}; known: {SHAPES}")
    return box


def draw_bar_chart(
    values: Mapping[str, float], width: int = 160, height: int = 120, colour: Colour = COLOURS["blue"]
) -> Image.Image:
    """A labelled vertical bar chart (labels under the bars, values above), values scaled to the tallest."""
    image, draw = canvas(width, height)
    top_margin, bottom_margin = 14, 16
    usable = height - top_margin - bottom_margin
    tallest = max(values.values(), default=1) or 1
    slot = width / max(len(values), 1)
    for index, (label, value) in enumerate(values.items()):
        left = index * slot + slot * 0.2
        right = (index + 1) * slot - slot * 0.2
        bar_top = height - bottom_margin - usable * value / tallest
        draw.rectangle([left, bar_top, right, height - bottom_margin], fill=colour)
        value_text = f"{value:g}"
        draw_text(draw, (left, bar_top - 11), value_text)
        draw_text(draw, (left, height - bottom_margin + 3), label[:6])
    draw.line([(0, height - bottom_margin), (width, height - bottom_margin)], fill=BLACK)
    return image


def grid_slots(
    rng: random.Random, shapes: Sequence[tuple[str, str, int]], grid: tuple[int, int], size: tuple[int, int]
) -> Iterator[tuple[str, str, int, int]]:
    """``(kind, colour, x, y)`` for each of ``shapes`` ((kind, colour, how many)): the centre of a distinct
    cell, drawn with ``rng``, of a ``grid`` (columns, rows) over a canvas of ``size`` (width, height)."""
    columns, rows = grid
    cells = rng.sample(range(columns * rows), sum(count for _, _, count in shapes))
    cell_width, cell_height = size[0] // columns, size[1] // rows
    for kind, colour, count in shapes:
        for _ in range(count):
            cell = cells.pop()
            x = (cell % columns) * cell_width + cell_width // 2
            yield kind, colour, x, (cell // columns) * cell_height + cell_height // 2


def drawn_scenes(
    seed: int,
    scenes: Sequence[tuple[Any, Any]],
    draw: Callable[[random.Random, Any], tuple[Image.Image, Any]],
) -> Iterator[tuple[int, dict[str, Any], Any, Any]]:
    """Per ``(shapes, questions)`` scene: its index, the ``image_cell`` of ``draw(rng, shapes)``'s image, the
    shapes it drew and the questions; one ``Random(seed)`` serves every scene in order."""
    rng = random.Random(seed)
    for index, (shapes, questions) in enumerate(scenes):
        image, drawn = draw(rng, shapes)
        yield index, image_cell(image), drawn, questions


def png_bytes(image: Image.Image) -> bytes:
    """The image as PNG bytes (no optimisation pass, so the bytes are stable across runs)."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def image_cell(image: Image.Image | bytes) -> dict[str, Any]:
    """The value of an HF ``Image`` column for ``image`` (PNG bytes, no path)."""
    return {"bytes": image if isinstance(image, bytes) else png_bytes(image), "path": None}


def parquet_bytes(rows: Sequence[Mapping[str, Any]], features: Any) -> bytes:
    """The parquet file (HF layout, features in its metadata) holding ``rows``, as bytes."""
    from datasets import Dataset

    columns = {name: [row.get(name) for row in rows] for name in features}
    buffer = io.BytesIO()
    Dataset.from_dict(columns, features=features).to_parquet(buffer)
    return buffer.getvalue()


_VALUE_DTYPES = ((bool, "bool"), (int, "int64"), (float, "float64"), (str, "string"))  # bool before int


def row_features(rows: Sequence[Mapping[str, Any]], list_columns: Mapping[str, str] | None = None) -> Any:
    """A bundled sample's HF ``Features``, read off its first row; list columns name their dtype in
    ``list_columns`` (each trailing "[]" a list level, e.g. "float64[][]": rows may hold empty lists)."""
    import datasets

    def listed(kind: str) -> Any:
        return datasets.Sequence(listed(kind[:-2])) if kind.endswith("[]") else datasets.Value(kind)

    def feature(name: str, value: Any) -> Any:
        if list_columns and name in list_columns:
            return listed(list_columns[name])
        if isinstance(value, Mapping) and set(value) == {"bytes", "path"}:
            return datasets.Image()
        for kind, dtype in _VALUE_DTYPES:
            if isinstance(value, kind):
                return datasets.Value(dtype)
        raise TypeError(f"column {name!r}: no feature for {type(value).__name__}; name it in list_columns")

    return datasets.Features({name: feature(name, value) for name, value in rows[0].items()})


def sample_parquet(
    name: str, rows: Sequence[Mapping[str, Any]], list_columns: Mapping[str, str] | None = None
) -> dict[str, bytes]:
    """``{name: parquet bytes}`` of a bundled sample: ``rows`` with ``row_features(rows, list_columns)``."""
    return {name: parquet_bytes(rows, row_features(rows, list_columns))}
