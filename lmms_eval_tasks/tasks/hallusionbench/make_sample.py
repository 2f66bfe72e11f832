"""Build the bundled HallusionBench sample: control-pair questions on PIL-drawn charts, shapes and text.
Writes ``sample/image.parquet`` and ``sample/non_image.parquet`` (the HF splits' layout); deterministic."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

from lmms_eval_tasks.framework.sample_data import (
    BLACK,
    GREY,
    WHITE,
    bitmap_font,
    canvas,
    draw_text,
    parquet_bytes,
)
from lmms_eval_tasks.tasks.hallusionbench.scoring import OFFICIAL_FIELDS

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
QUESTIONS_FILE = Path(__file__).resolve().parent / "sample_questions.json"  # the questions, as data
IMAGE_FILE = "image.parquet"
NON_IMAGE_FILE = "non_image.parquet"
STRING_FIELDS = OFFICIAL_FIELDS  # the official schema: 11 string fields (+ image)
BLUE, RED, GREEN = (40, 80, 200), (200, 40, 40), (30, 140, 60)


def draw_lines(top_length: int) -> Image.Image:
    """Two horizontal lines with outward/inward fins (Mueller-Lyer); the bottom line is 80 px."""
    image, draw = canvas(128, 96)
    for y, length, fins_out in ((30, top_length, True), (68, 80, False)):
        left, right = 64 - length // 2, 64 + length // 2
        draw.line([(left, y), (right, y)], fill=BLACK, width=2)
        offset = -8 if fins_out else 8
        for x, direction in ((left, 1), (right, -1)):
            draw.line([(x, y), (x - direction * offset, y - 8)], fill=BLACK, width=2)
            draw.line([(x, y), (x - direction * offset, y + 8)], fill=BLACK, width=2)
    return image


def draw_triangle(legs: tuple[int, int], hypotenuse: int) -> Image.Image:
    """A right triangle with its side lengths written next to the sides."""
    image, draw = canvas(128, 112)
    corner, top, right = (20, 92), (20, 20), (110, 92)
    draw.polygon([corner, top, right], outline=BLACK, width=2)
    draw.rectangle([20, 84, 28, 92], outline=BLACK)
    draw_text(draw, (6, 52), str(legs[0]))
    draw_text(draw, (60, 96), str(legs[1]))
    draw_text(draw, (70, 44), str(hypotenuse))
    return image


def draw_sign(word: str, colour: tuple[int, int, int]) -> Image.Image:
    """A rectangular shop sign with one word on it."""
    image, draw = canvas(128, 96)
    draw.rectangle([14, 28, 114, 68], fill=colour, outline=BLACK, width=2)
    width = draw.textlength(word, font=bitmap_font())
    draw_text(draw, (int(64 - width / 2), 42), word, fill=WHITE)
    return image


def draw_circles(count: int, colour: tuple[int, int, int]) -> Image.Image:
    """``count`` filled circles in a row."""
    image, draw = canvas(144, 96)
    step = 144 // (count + 1)
    for index in range(count):
        x = step * (index + 1)
        draw.ellipse([x - 12, 36, x + 12, 60], fill=colour, outline=BLACK)
    return image


def draw_frames(moving_right: bool) -> Image.Image:
    """A three-frame strip (as the benchmark's video questions): a ball crossing the frame."""
    image, draw = canvas(150, 96)
    positions = [12, 24, 36] if moving_right else [36, 24, 12]
    for frame, x in enumerate(positions):
        left = frame * 50
        draw.rectangle([left + 1, 20, left + 48, 76], outline=BLACK)
        draw_text(draw, (left + 4, 6), f"t={frame + 1}")
        draw.ellipse([left + x - 6, 42, left + x + 6, 54], fill=RED)
    return image


def draw_bar_chart(values: dict[str, int]) -> Image.Image:
    """Bar chart of mountain heights (metres), one labelled bar per mountain."""
    image, draw = canvas(160, 128)
    draw_text(draw, (4, 2), "Height (m)")
    peak = max(values.values())
    for index, (name, value) in enumerate(values.items()):
        left = 12 + index * 50
        height = int(80 * value / peak)
        draw.rectangle([left, 104 - height, left + 34, 104], fill=BLUE, outline=BLACK)
        draw_text(draw, (left, 92 - height), str(value))
        draw_text(draw, (left, 108), name)
    return image


def draw_table(rows: list[tuple[str, str]]) -> Image.Image:
    """A two-column table (planet, diameter in km) with grid lines."""
    image, draw = canvas(160, 96)
    header = [("Planet", "Diameter km")] + rows
    for index, (left_cell, right_cell) in enumerate(header):
        top = 6 + index * 20
        draw.rectangle([6, top, 154, top + 20], outline=BLACK)
        draw.line([(70, top), (70, top + 20)], fill=BLACK)
        draw_text(draw, (10, top + 5), left_cell)
        draw_text(draw, (74, top + 5), right_cell)
    return image


def draw_map(upper: str, lower: str) -> Image.Image:
    """A schematic map: a north arrow and two labelled cities, ``upper`` to the north of ``lower``."""
    image, draw = canvas(128, 128)
    draw.rectangle([2, 2, 125, 125], outline=GREY)
    draw.line([(112, 30), (112, 10)], fill=BLACK, width=2)
    draw.polygon([(108, 14), (116, 14), (112, 6)], fill=BLACK)
    draw_text(draw, (109, 32), "N")
    for name, (x, y) in ((upper, (40, 30)), (lower, (30, 96))):
        draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=GREEN)
        draw_text(draw, (x + 8, y - 5), name)
    return image


def draw_note(temperature: int) -> Image.Image:
    """A printed note stating the boiling point of water."""
    image, draw = canvas(160, 96)
    draw.rectangle([4, 4, 155, 91], outline=GREY)
    for index, line in enumerate(("Water boils at", f"{temperature} degrees C", "at sea level.")):
        draw_text(draw, (12, 20 + index * 20), line)
    return image


DRAWINGS: dict[str, Callable[..., Image.Image]] = {
    name: globals()[f"draw_{name}"]
    for name in "lines triangle sign circles frames bar_chart table map note".split()
}
COLOURS = {"BLUE": BLUE, "RED": RED, "GREEN": GREEN}


def _figure(name: str, *args: Any) -> Image.Image:
    """One drawing named in ``sample_questions.json`` (``["circles", 3, "BLUE"]``: 3 blue circles)."""
    return DRAWINGS[name](*(COLOURS.get(arg, arg) if isinstance(arg, str) else arg for arg in args))


def build_rows() -> list[dict[str, Any]]:
    """The sample questions in the official 11-field schema plus ``image``: VD figure 0 the original image
    (visual_input 1), others edited (2); VS figure 0 no image (0), figure 1 the original, later edited."""
    rows = []
    for figure_set in json.loads(QUESTIONS_FILE.read_text(encoding="utf-8")):
        category, subcategory = figure_set["category"], figure_set["subcategory"]
        first_image = 1 if category == "VS" else 0
        for figure_id, drawing in enumerate([None] * first_image + figure_set["figures"]):
            visual_input = "0" if drawing is None else ("1" if figure_id == first_image else "2")
            filename = None if drawing is None else f"./{category}/{subcategory}/0_{figure_id}.png"
            for question_id, (question, answers) in enumerate(figure_set["questions"]):
                gt_answer, details = answers[figure_id]
                identity = (category, subcategory, visual_input, "0", str(figure_id), figure_set["note"])
                answer = (str(question_id), question, details, gt_answer, filename)
                fields = dict(zip(OFFICIAL_FIELDS, (*identity, *answer), strict=True))  # the official order
                rows.append({**fields, "image": None if drawing is None else _figure(*drawing)})
    return rows


def _features(with_image: bool):
    from datasets import Features, Value
    from datasets import Image as ImageFeature

    columns = {name: Value("string") for name in STRING_FIELDS}
    if with_image:
        columns["image"] = ImageFeature()
    return Features(columns)


def sample_files() -> dict[str, bytes]:
    """The two parquet files (HF layout) by file name: questions with an image, and the no-image ones."""
    rows = build_rows()
    with_image = [row for row in rows if row["visual_input"] != "0"]
    without_image = [
        {key: value for key, value in row.items() if key != "image"}
        for row in rows
        if row["visual_input"] == "0"
    ]
    return {
        IMAGE_FILE: parquet_bytes(with_image, _features(True)),
        NON_IMAGE_FILE: parquet_bytes(without_image, _features(False)),
    }


def write_sample(directory: Path = SAMPLE_DIR) -> tuple[Path, Path]:
    """Write both parquet files into ``directory``; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in sample_files().items():
        (directory / name).write_bytes(content)
    return directory / IMAGE_FILE, directory / NON_IMAGE_FILE


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=SAMPLE_DIR, help="folder for the two parquet files")
    options = parser.parse_args(argv)
    image_path, non_image_path = write_sample(options.output)
    print(f"wrote {image_path} and {non_image_path}")


if __name__ == "__main__":
    main()
