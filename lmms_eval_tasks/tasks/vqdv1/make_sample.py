"""The bundled VQDv1 sample: generated scenes of coloured shapes whose boxes are known by construction, every
box-count bucket present (5+ too, so the official protocol's arithmetic runs); deterministic."""

from __future__ import annotations

import random
from typing import Any

from lmms_eval_tasks.framework import sample_data

SEED = 0
WIDTH, HEIGHT = 320, 240
SAMPLE_FILE = "vqdv1_sample.parquet"
_COLUMNS, _ROWS = 5, 4

# Per scene: the shapes drawn (kind, colour, how many), then the queries: (kind, colour or None).
SCENES: list[tuple[list[tuple[str, str, int]], list[tuple[str, str | None]]]] = [
    (
        [("circle", "red", 1), ("square", "green", 2), ("triangle", "blue", 3)],
        [("circle", "red"), ("square", "green"), ("triangle", "blue"), ("circle", "yellow")],
    ),
    (
        [("square", "blue", 7), ("circle", "yellow", 1)],
        [("square", "blue"), ("circle", "yellow"), ("triangle", None)],
    ),
    (
        [("circle", "red", 5), ("triangle", "purple", 2)],
        [("circle", "red"), ("triangle", "purple"), ("square", None)],
    ),
    (
        [("square", "orange", 4), ("circle", "green", 1), ("triangle", "red", 1)],
        [("square", "orange"), ("circle", None), ("triangle", None), ("square", "blue")],
    ),
    (
        [("triangle", "yellow", 2), ("circle", "blue", 3)],
        [("triangle", None), ("circle", "blue"), ("square", "red")],
    ),
    ([("square", "purple", 1)], [("square", "purple"), ("circle", None)]),
]


def _draw_scene(rng: random.Random, shapes: list[tuple[str, str, int]]) -> tuple[Any, list[dict[str, Any]]]:
    """Draw the shapes in distinct grid cells; returns the image and each shape with its [x, y, w, h]."""
    image, draw = sample_data.canvas(WIDTH, HEIGHT, (235, 235, 235))
    drawn = []
    for kind, colour, x, y in sample_data.grid_slots(rng, shapes, (_COLUMNS, _ROWS), (WIDTH, HEIGHT)):
        radius = rng.randint(14, 22)
        centre = (x + rng.randint(-6, 6), y + rng.randint(-4, 4))
        x1, y1, x2, y2 = sample_data.draw_shape(draw, kind, centre, radius, sample_data.COLOURS[colour])
        drawn.append({"kind": kind, "colour": colour, "box": [x1, y1, x2 - x1, y2 - y1]})
    return image, drawn


def rows() -> list[dict[str, Any]]:
    """The sample's rows in the official VQDv1 schema plus an ``image`` cell."""
    result: list[dict[str, Any]] = []
    for image_id, cell, drawn, queries in sample_data.drawn_scenes(SEED, SCENES, _draw_scene):
        for kind, colour in queries:
            boxes = [
                [float(value) for value in shape["box"]]
                for shape in drawn
                if shape["kind"] == kind and (colour is None or shape["colour"] == colour)
            ]
            noun = f"{colour} {kind}" if colour else kind
            result.append(
                {
                    "question": f"Show the {noun} in the picture.",
                    "gtbox": boxes or [[]],
                    "question_type": "color" if colour else "simple",
                    "question_id": len(result),
                    "image_id": image_id,
                    "width": WIDTH,
                    "height": HEIGHT,
                    "file_name": f"vqdv1_sample_{image_id:02d}.png",
                    "image": cell,
                }
            )
    return result


def sample_files() -> dict[str, bytes]:
    """{file name under sample/: bytes} of the bundled sample."""
    return sample_data.sample_parquet(SAMPLE_FILE, rows(), {"gtbox": "float64[][]"})
