"""The bundled TallyQA sample: 15 simple and complex counting questions in TallyQA's schema on four
generated scenes of shapes (counts 0-7: every bucket in both splits); seeded positions."""

from __future__ import annotations

import random
from typing import Any

from lmms_eval_tasks.framework import sample_data

SEED = 0
WIDTH, HEIGHT = 256, 192
SAMPLE_FILE = "tallyqa_sample.parquet"
_COLUMNS, _ROWS = 6, 4

# Per scene: shapes drawn (kind, colour, how many) and questions (text, issimple, kind counted, colour or
# None for any colour).
SCENES: list[tuple[list[tuple[str, str, int]], list[tuple[str, bool, str | None, str | None]]]] = [
    (
        [("square", "red", 2), ("square", "blue", 1), ("triangle", "green", 1)],
        [
            ("How many circles are there?", True, "circle", None),
            ("How many squares are there?", True, "square", None),
            ("How many triangles are there?", True, "triangle", None),
            ("How many squares are red?", False, "square", "red"),
            ("How many squares are blue?", False, "square", "blue"),
        ],
    ),
    (
        [("circle", "yellow", 5), ("triangle", "green", 2)],
        [
            ("How many circles are there?", True, "circle", None),
            ("How many triangles are there?", True, "triangle", None),
            ("How many triangles are green?", False, "triangle", "green"),
            ("How many circles are purple?", False, "circle", "purple"),
        ],
    ),
    (
        [("square", "purple", 7), ("circle", "orange", 3)],
        [
            ("How many squares are there?", True, "square", None),
            ("How many circles are orange?", False, "circle", "orange"),
            ("How many circles are there?", True, "circle", None),
        ],
    ),
    (
        [("triangle", "blue", 4), ("circle", "red", 1)],
        [
            ("How many triangles are blue?", False, "triangle", "blue"),
            ("How many shapes are red circles?", False, "circle", "red"),
            ("How many triangles are there?", True, "triangle", None),
        ],
    ),
]


def _draw(rng: random.Random, shapes: list[tuple[str, str, int]]) -> tuple[Any, list[tuple[str, str]]]:
    """Draw the shapes in distinct grid cells; returns the image and the (kind, colour) of each shape."""
    image, draw = sample_data.canvas(WIDTH, HEIGHT, (240, 240, 240))
    drawn = []
    for kind, colour, x, y in sample_data.grid_slots(rng, shapes, (_COLUMNS, _ROWS), (WIDTH, HEIGHT)):
        centre = (x + rng.randint(-3, 3), y + rng.randint(-3, 3))
        sample_data.draw_shape(draw, kind, centre, rng.randint(12, 16), sample_data.COLOURS[colour])
        drawn.append((kind, colour))
    return image, drawn


def rows() -> list[dict[str, Any]]:
    """The sample's rows in TallyQA's schema plus an ``image`` cell."""
    result: list[dict[str, Any]] = []
    for image_id, cell, drawn, questions in sample_data.drawn_scenes(SEED, SCENES, _draw):
        for text, simple, kind, colour in questions:
            count = sum(1 for k, c in drawn if k == kind and (colour is None or c == colour))
            result.append(
                {
                    "image_file": f"tallyqa_sample/{image_id:02d}.png",
                    "image_id": image_id,
                    "question": text,
                    "question_id": 800000 + len(result),
                    "answer": count,
                    "issimple": simple,
                    "data_source": "generated",
                    "image": cell,
                }
            )
    return result


def sample_files() -> dict[str, bytes]:
    """{file name under sample/: bytes} of the bundled sample."""
    return sample_data.sample_parquet(SAMPLE_FILE, rows())
