"""Contact sheet: one image under every corruption of a profile and every severity, as one PIL image."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lmms_eval_tasks.corruptions.engine import as_rgb_uint8, corrupt, corruption_names


def contact_sheet(
    image: Any,
    profile: str = "vrb",
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    seed: int = 0,
    names: Sequence[str] | None = None,
    tile: int = 128,
) -> Any:
    """Rows = corruptions, columns = clean + each severity; tiles scaled to ``tile`` pixels wide (outputs
    smaller than the input, ``vrb`` pixelate, by nearest neighbour so their blocks show)."""
    from PIL import Image, ImageDraw, ImageFont

    pixels = as_rgb_uint8(image)
    names = list(names) if names is not None else corruption_names(profile)
    tile_height = max(1, round(tile * pixels.shape[0] / pixels.shape[1]))
    label_width, header, pad = 180, 22, 2
    columns = 1 + len(severities)
    size = (label_width + columns * (tile + pad), header + len(names) * (tile_height + pad))
    sheet = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(sheet)
    try:
        font = ImageFont.load_default(size=13)
    except TypeError:  # Pillow < 10.1 has no sized default font
        font = ImageFont.load_default()

    def paste(array: np.ndarray, row: int, column: int) -> None:
        smaller = array.shape[0] < pixels.shape[0] or array.shape[1] < pixels.shape[1]
        resample = Image.NEAREST if smaller else Image.BOX
        thumb = Image.fromarray(array).resize((tile, tile_height), resample)
        sheet.paste(thumb, (label_width + column * (tile + pad), header + row * (tile_height + pad)))

    for column, title in enumerate(["clean", *[f"severity {s}" for s in severities]]):
        draw.text((label_width + column * (tile + pad) + 4, 4), title, fill="black", font=font)
    for row, name in enumerate(names):
        top = header + row * (tile_height + pad)
        draw.text((4, top + tile_height // 2 - 8), name, fill="black", font=font)
        paste(pixels, row, 0)
        for column, severity in enumerate(severities, start=1):
            paste(corrupt(pixels, name, severity, seed=seed, profile=profile), row, column)
    draw.text((4, 4), f"{profile}, seed {seed}", fill="black", font=font)
    return sheet
