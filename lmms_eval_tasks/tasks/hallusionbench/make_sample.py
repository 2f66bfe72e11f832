"""Build the bundled HallusionBench sample: control-pair questions on PIL-drawn charts, shapes and text.

Writes ``sample/image.parquet`` and ``sample/non_image.parquet`` (the HF splits' layout); deterministic.
"""

from __future__ import annotations

import argparse
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
IMAGE_FILE = "image.parquet"
NON_IMAGE_FILE = "non_image.parquet"
STRING_FIELDS = OFFICIAL_FIELDS  # the official schema: 11 string fields (+ image)
BLUE, RED, GREEN = (40, 80, 200), (200, 40, 40), (30, 140, 60)
_canvas = canvas
_text = draw_text


# ---- drawings -------------------------------------------------------------------------------------------


def draw_lines(top_length: int) -> Image.Image:
    """Two horizontal lines with outward/inward fins (Mueller-Lyer); the bottom line is 80 px."""
    image, draw = _canvas(128, 96)
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
    image, draw = _canvas(128, 112)
    corner, top, right = (20, 92), (20, 20), (110, 92)
    draw.polygon([corner, top, right], outline=BLACK, width=2)
    draw.rectangle([20, 84, 28, 92], outline=BLACK)
    _text(draw, (6, 52), str(legs[0]))
    _text(draw, (60, 96), str(legs[1]))
    _text(draw, (70, 44), str(hypotenuse))
    return image


def draw_sign(word: str, colour: tuple[int, int, int]) -> Image.Image:
    """A rectangular shop sign with one word on it."""
    image, draw = _canvas(128, 96)
    draw.rectangle([14, 28, 114, 68], fill=colour, outline=BLACK, width=2)
    width = draw.textlength(word, font=bitmap_font())
    _text(draw, (int(64 - width / 2), 42), word, fill=WHITE)
    return image


def draw_circles(count: int, colour: tuple[int, int, int]) -> Image.Image:
    """``count`` filled circles in a row."""
    image, draw = _canvas(144, 96)
    step = 144 // (count + 1)
    for index in range(count):
        x = step * (index + 1)
        draw.ellipse([x - 12, 36, x + 12, 60], fill=colour, outline=BLACK)
    return image


def draw_frames(moving_right: bool) -> Image.Image:
    """A three-frame strip (as the benchmark's video questions): a ball crossing the frame."""
    image, draw = _canvas(150, 96)
    positions = [12, 24, 36] if moving_right else [36, 24, 12]
    for frame, x in enumerate(positions):
        left = frame * 50
        draw.rectangle([left + 1, 20, left + 48, 76], outline=BLACK)
        _text(draw, (left + 4, 6), f"t={frame + 1}")
        draw.ellipse([left + x - 6, 42, left + x + 6, 54], fill=RED)
    return image


def draw_bar_chart(values: dict[str, int]) -> Image.Image:
    """Bar chart of mountain heights (metres), one labelled bar per mountain."""
    image, draw = _canvas(160, 128)
    _text(draw, (4, 2), "Height (m)")
    peak = max(values.values())
    for index, (name, value) in enumerate(values.items()):
        left = 12 + index * 50
        height = int(80 * value / peak)
        draw.rectangle([left, 104 - height, left + 34, 104], fill=BLUE, outline=BLACK)
        _text(draw, (left, 92 - height), str(value))
        _text(draw, (left, 108), name)
    return image


def draw_table(rows: list[tuple[str, str]]) -> Image.Image:
    """A two-column table (planet, diameter in km) with grid lines."""
    image, draw = _canvas(160, 96)
    header = [("Planet", "Diameter km")] + rows
    for index, (left_cell, right_cell) in enumerate(header):
        top = 6 + index * 20
        draw.rectangle([6, top, 154, top + 20], outline=BLACK)
        draw.line([(70, top), (70, top + 20)], fill=BLACK)
        _text(draw, (10, top + 5), left_cell)
        _text(draw, (74, top + 5), right_cell)
    return image


def draw_map(upper: str, lower: str) -> Image.Image:
    """A schematic map: a north arrow and two labelled cities, ``upper`` to the north of ``lower``."""
    image, draw = _canvas(128, 128)
    draw.rectangle([2, 2, 125, 125], outline=GREY)
    draw.line([(112, 30), (112, 10)], fill=BLACK, width=2)
    draw.polygon([(108, 14), (116, 14), (112, 6)], fill=BLACK)
    _text(draw, (109, 32), "N")
    for name, (x, y) in ((upper, (40, 30)), (lower, (30, 96))):
        draw.ellipse([x - 4, y - 4, x + 4, y + 4], fill=GREEN)
        _text(draw, (x + 8, y - 5), name)
    return image


def draw_note(temperature: int) -> Image.Image:
    """A printed note stating the boiling point of water."""
    image, draw = _canvas(160, 96)
    draw.rectangle([4, 4, 155, 91], outline=GREY)
    for index, line in enumerate(("Water boils at", f"{temperature} degrees C", "at sea level.")):
        _text(draw, (12, 20 + index * 20), line)
    return image


# ---- questions -----------------------------------------------------------------------------------------


def _row(
    category: str,
    subcategory: str,
    figure_id: int,
    question_id: int,
    question: str,
    gt_answer: str,
    details: str,
    note: str,
    image: Callable[[], Image.Image] | None,
    visual_input: str,
) -> dict[str, Any]:
    filename = None if image is None else f"./{category}/{subcategory}/0_{figure_id}.png"
    return {
        "category": category,
        "subcategory": subcategory,
        "visual_input": visual_input,
        "set_id": "0",
        "figure_id": str(figure_id),
        "sample_note": note,
        "question_id": str(question_id),
        "question": question,
        "gt_answer_details": details,
        "gt_answer": gt_answer,
        "filename": filename,
        "image": None if image is None else image(),
    }


def _question_set(
    category: str,
    subcategory: str,
    note: str,
    figures: list[Callable[[], Image.Image]],
    questions: list[tuple[str, list[tuple[str, str]]]],
) -> list[dict[str, Any]]:
    """A figure set. VD: figure 0 is the original image (visual_input 1), the others edited (2). VS: figure 0
    has no image (visual_input 0), figure 1 the original, later ones edited."""
    images = [None, *figures] if category == "VS" else figures
    first_image = 1 if category == "VS" else 0
    rows = []
    for figure_id, image in enumerate(images):
        visual_input = "0" if image is None else ("1" if figure_id == first_image else "2")
        for question_id, (question, answers) in enumerate(questions):
            gt_answer, details = answers[figure_id]
            rows.append(
                _row(
                    category,
                    subcategory,
                    figure_id,
                    question_id,
                    question,
                    gt_answer,
                    details,
                    note,
                    image,
                    visual_input,
                )
            )
    return rows


def build_rows() -> list[dict[str, Any]]:
    """All sample questions in the official 11-field schema plus ``image`` (a PIL image or None)."""
    same_length = "The two horizontal lines are the same length."
    rows: list[dict[str, Any]] = []
    rows += _question_set(
        "VD",
        "illusion",
        "mueller-lyer lines",
        [lambda: draw_lines(80), lambda: draw_lines(56)],
        [
            (
                "Are the two horizontal lines in the image the same length?",
                [("1", same_length), ("0", "The top line is shorter than the bottom line.")],
            ),
        ],
    )
    rows += _question_set(
        "VD",
        "math",
        "right triangle",
        [lambda: draw_triangle((3, 4), 5), lambda: draw_triangle((6, 8), 10)],
        [
            (
                "Is the hypotenuse of the right triangle in the image 5?",
                [("1", "The hypotenuse is 5."), ("0", "The hypotenuse is 10.")],
            ),
        ],
    )
    rows += _question_set(
        "VD",
        "ocr",
        "shop sign",
        [lambda: draw_sign("OPEN", GREEN), lambda: draw_sign("CLOSED", RED)],
        [
            (
                "Does the sign in the image say OPEN?",
                [("1", "The sign says OPEN."), ("0", "The sign says CLOSED.")],
            ),
        ],
    )
    rows += _question_set(
        "VD",
        "figure",
        "circles",
        [lambda: draw_circles(3, BLUE), lambda: draw_circles(4, BLUE), lambda: draw_circles(3, RED)],
        [
            (
                "Are there exactly three circles in the image?",
                [
                    ("1", "There are three circles."),
                    ("0", "There are four circles."),
                    ("1", "There are three circles."),
                ],
            ),
            (
                "Are all the circles in the image blue?",
                [
                    ("1", "All the circles are blue."),
                    ("1", "All the circles are blue."),
                    ("0", "The circles are red."),
                ],
            ),
        ],
    )
    rows += _question_set(
        "VD",
        "video",
        "ball frames",
        [lambda: draw_frames(True), lambda: draw_frames(False)],
        [
            (
                "According to the frames, is the ball moving to the right?",
                [("1", "The ball moves from left to right."), ("0", "The ball moves from right to left.")],
            ),
        ],
    )
    heights = {"Everest": 8849, "K2": 8611, "Kanch": 8586}
    edited_heights = {"Everest": 8611, "K2": 8849, "Kanch": 8586}
    rows += _question_set(
        "VS",
        "chart",
        "mountain heights",
        [lambda: draw_bar_chart(heights), lambda: draw_bar_chart(edited_heights)],
        [
            (
                "According to the chart, is Mount Everest the tallest of the mountains shown?",
                [
                    ("1", "Mount Everest (8849 m) is the tallest."),
                    ("1", "Mount Everest (8849 m) is the tallest."),
                    ("0", "K2 (8849 m) is the tallest in the chart."),
                ],
            ),
            (
                "According to the chart, is K2 taller than Mount Everest?",
                [
                    ("0", "K2 (8611 m) is lower than Mount Everest (8849 m)."),
                    ("0", "K2 (8611 m) is lower than Mount Everest (8849 m)."),
                    ("1", "In the chart K2 (8849 m) is taller than Mount Everest (8611 m)."),
                ],
            ),
        ],
    )
    planets = [("Jupiter", "139820"), ("Saturn", "116460"), ("Earth", "12742")]
    edited_planets = [("Jupiter", "139820"), ("Saturn", "149000"), ("Earth", "12742")]
    rows += _question_set(
        "VS",
        "table",
        "planet diameters",
        [lambda: draw_table(planets), lambda: draw_table(edited_planets)],
        [
            (
                "According to the table, is Jupiter the largest planet listed?",
                [
                    ("1", "Jupiter is the largest planet."),
                    ("1", "Jupiter (139820 km) is the largest planet listed."),
                    ("0", "In the table Saturn (149000 km) is larger than Jupiter."),
                ],
            ),
        ],
    )
    rows += _question_set(
        "VS",
        "map",
        "cities",
        [lambda: draw_map("Paris", "Madrid"), lambda: draw_map("Madrid", "Paris")],
        [
            (
                "According to the map, is Paris north of Madrid?",
                [
                    ("1", "Paris is north of Madrid."),
                    ("1", "Paris is north of Madrid."),
                    ("0", "On the map Madrid is north of Paris."),
                ],
            ),
        ],
    )
    rows += _question_set(
        "VS",
        "ocr",
        "boiling point note",
        [lambda: draw_note(100), lambda: draw_note(90)],
        [
            (
                "According to the text in the image, does water boil at 100 degrees Celsius at sea level?",
                [
                    ("1", "Water boils at 100 degrees Celsius at sea level."),
                    ("1", "The note says water boils at 100 degrees Celsius."),
                    ("0", "The note says water boils at 90 degrees Celsius."),
                ],
            ),
        ],
    )
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
