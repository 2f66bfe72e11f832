"""The bundled DARE sample: drawn scenes of coloured shapes with answers known by construction.

Official schema (answers as option texts and as letters: both encodings), deterministic per seed.
"""

from __future__ import annotations

import argparse
import itertools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework.sample_data import COLOURS as SHARED_COLOURS
from lmms_eval_tasks.framework.sample_data import canvas, draw_shape, parquet_bytes, png_bytes, row_features

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
DEFAULT_SEED = 0
IMAGE_SIZE = 128
CONFIGS = ("1_correct", "1_correct_var", "n_correct")
LETTERS = "ABCD"
COLOURS = {name: SHARED_COLOURS[name] for name in ("red", "green", "blue", "yellow")}
SHAPES = ("circle", "square", "triangle")


@dataclass(frozen=True)
class Shape:
    """One drawn object: its colour, shape and grid cell (column 0 = leftmost)."""

    colour: str
    kind: str
    column: int
    row: int

    @property
    def name(self) -> str:
        return f"{self.colour} {self.kind}"


def _draw(shapes: list[Shape], columns: int, rows: int) -> bytes:
    """Render the scene as PNG bytes: white background, one shape per grid cell."""
    image, draw = canvas(IMAGE_SIZE, IMAGE_SIZE)
    cell_width, cell_height = IMAGE_SIZE / columns, IMAGE_SIZE / rows
    radius = min(cell_width, cell_height) * 0.36
    for shape in shapes:
        centre = ((shape.column + 0.5) * cell_width, (shape.row + 0.5) * cell_height)
        draw_shape(draw, shape.kind, centre, radius, COLOURS[shape.colour])
    return png_bytes(image)


def _counting_scene(rng: random.Random) -> tuple[list[Shape], int, int]:
    """6-10 shapes on a 4x4 grid, colours and kinds repeating so conditions select subsets."""
    cells = rng.sample(list(itertools.product(range(4), range(4))), rng.randint(6, 10))
    return [Shape(rng.choice(list(COLOURS)), rng.choice(SHAPES), column, row) for column, row in cells], 4, 4


def _ordering_scene(rng: random.Random) -> tuple[list[Shape], int, int]:
    """4 distinct shapes, each in its own column of a 4x3 grid, so left-to-right order is unambiguous."""
    kinds = rng.sample(list(itertools.product(COLOURS, SHAPES)), 4)
    columns = rng.sample(range(4), 4)
    shapes = [
        Shape(colour, kind, column, rng.randrange(3))
        for (colour, kind), column in zip(kinds, columns, strict=True)
    ]
    return shapes, 4, 3


def _counting_condition(rng: random.Random, shapes: list[Shape]) -> tuple[str, int]:
    """A conditional counting question and its answer."""
    colour = rng.choice([shape.colour for shape in shapes])
    kind = rng.choice(SHAPES)
    template = rng.randrange(3)
    if template == 0:
        count = sum(shape.colour == colour and shape.kind != kind for shape in shapes)
        return f"How many {colour} shapes are there that are not {kind}s?", count
    if template == 1:
        count = sum(shape.kind == kind and shape.colour != colour for shape in shapes)
        return f"How many {kind}s are there, not counting the {colour} ones?", count
    count = sum(shape.colour == colour or shape.kind == kind for shape in shapes)
    return f"How many shapes are {colour} or are {kind}s?", count


def _ordered(shapes: list[Shape]) -> list[Shape]:
    return sorted(shapes, key=lambda shape: shape.column)


def _ordering_question(rng: random.Random, shapes: list[Shape]) -> tuple[str, str, list[str]]:
    """An ordering question, its gold option text and at least six distractor texts."""
    ordered = _ordered(shapes)
    template = rng.randrange(3)
    absent = [
        f"{colour} {kind}"
        for colour, kind in itertools.product(COLOURS, SHAPES)
        if f"{colour} {kind}" not in {shape.name for shape in shapes}
    ]
    if template == 0:
        gold = ordered[0].name
        question = "Which shape is furthest to the left?"
    elif template == 1:
        anchor = rng.randrange(3)
        gold = ordered[anchor + 1].name
        question = f"Which shape is directly to the right of the {ordered[anchor].name}?"
    else:
        permutations = [list(order) for order in itertools.permutations(ordered) if list(order) != ordered]
        distractors = [", ".join(shape.name for shape in order) for order in rng.sample(permutations, 6)]
        return (
            "What is the order of the shapes from left to right?",
            ", ".join(shape.name for shape in ordered),
            distractors,
        )
    in_scene = [shape.name for shape in ordered if shape.name != gold]
    return question, gold, in_scene + rng.sample(absent, 3)


def _place(rng: random.Random, gold: str, distractors: list[str]) -> tuple[dict[str, str], str]:
    """Shuffle gold and three distractors into A-D; returns the options and the gold letter."""
    texts = [gold, *distractors[:3]]
    rng.shuffle(texts)
    return dict(zip(LETTERS, texts, strict=True)), LETTERS[texts.index(gold)]


def _single_item(rng: random.Random, category: str) -> tuple[str, str, list[str], list[Shape], bytes]:
    """A question, gold text, a pool of distractor texts (>= 3) and the image for one single-correct item."""
    if category == "count":
        shapes, columns, rows = _counting_scene(rng)
        question, count = _counting_condition(rng, shapes)
        pool = [value for value in range(max(0, count - 4), max(0, count - 4) + 8) if value != count]
        distractors = [str(value) for value in rng.sample(pool, 6)]
        return question, str(count), distractors, shapes, _draw(shapes, columns, rows)
    shapes, columns, rows = _ordering_scene(rng)
    question, gold, distractors = _ordering_question(rng, shapes)
    return question, gold, distractors, shapes, _draw(shapes, columns, rows)


def _row(
    identifier: str,
    instance_id: int,
    question: str,
    options: dict[str, str],
    answer: list[str],
    category: str,
    image: bytes,
) -> dict[str, Any]:
    return {
        "id": identifier,
        "instance_id": instance_id,
        "question": question,
        "answer": answer,
        **options,
        "category": category,
        "img": {"bytes": image, "path": None},
    }


def build_single(rng: random.Random, instances: int = 10, variants: int = 1) -> list[dict[str, Any]]:
    """Single-correct rows (answer: the gold option's text), alternating count and order; ``variants`` option
    sets per instance (one instance_id and image), each with three distractors of its own from six or more."""
    rows = []
    for instance in range(instances):
        category = ("count", "order")[instance % 2]
        question, gold, pool, _, image = _single_item(rng, category)
        for variant in range(variants):
            options, _ = _place(rng, gold, rng.sample(pool, 3))
            name = f"sample-1c-{instance:03d}" if variants == 1 else f"sample-1cv-{instance:03d}-{variant}"
            rows.append(_row(name, instance, question, options, [gold], category, image))
    return rows


def _true_false_statements(
    rng: random.Random, shapes: list[Shape], category: str
) -> tuple[list[str], list[str]]:
    """Statements about the scene split into true and false ones, at least four of each."""
    true: list[str] = []
    false: list[str] = []
    if category == "count":
        for colour, kind in itertools.product(COLOURS, SHAPES):
            count = sum(shape.colour == colour and shape.kind == kind for shape in shapes)
            true.append(
                f"There {'is' if count == 1 else 'are'} {count} {colour} {kind}{'' if count == 1 else 's'}."
            )
            wrong = count + rng.choice((1, 2)) if count == 0 or rng.random() < 0.5 else count - 1
            false.append(
                f"There {'is' if wrong == 1 else 'are'} {wrong} {colour} {kind}{'' if wrong == 1 else 's'}."
            )
    else:
        for first, second in itertools.permutations(_ordered(shapes), 2):
            statement = f"The {first.name} is to the left of the {second.name}."
            (true if first.column < second.column else false).append(statement)
    return rng.sample(true, len(true)), rng.sample(false, len(false))


def build_multi(rng: random.Random, count: int = 10) -> list[dict[str, Any]]:
    """Multi-correct rows: "Which statements are true?" with 0-4 true options (answer = letters)."""
    rows = []
    for index in range(count):
        category = ("count", "order")[index % 2]
        shapes, columns, rows_in_grid = (_counting_scene if category == "count" else _ordering_scene)(rng)
        true, false = _true_false_statements(rng, shapes, category)
        correct = index % 5  # 0, 1, 2, 3, 4 correct options, twice over
        texts = [(statement, True) for statement in true[:correct]] + [
            (statement, False) for statement in false[: 4 - correct]
        ]
        rng.shuffle(texts)
        options = {letter: text for letter, (text, _) in zip(LETTERS, texts, strict=True)}
        answer = [letter for letter, (_, is_true) in zip(LETTERS, texts, strict=True) if is_true]
        question = (
            "Which of the following statements about the number of shapes are true?"
            if category == "count"
            else "Which of the following statements about the positions of the shapes are true?"
        )
        image = _draw(shapes, columns, rows_in_grid)
        rows.append(_row(f"sample-nc-{index:03d}", index, question, options, answer, category, image))
    return rows


def build_rows(seed: int = DEFAULT_SEED) -> dict[str, list[dict[str, Any]]]:
    """All three configs' validation rows for ``seed`` (each config has its own derived generator)."""
    return {
        "1_correct": build_single(random.Random(f"{seed}-1_correct")),
        "1_correct_var": build_single(random.Random(f"{seed}-1_correct_var"), instances=4, variants=3),
        "n_correct": build_multi(random.Random(f"{seed}-n_correct")),
    }


def features(rows: list[dict[str, Any]] | None = None) -> Any:
    """The official DARE schema as ``datasets.Features``, read off the rows (img is an HF Image feature)."""
    return row_features(rows or build_single(random.Random(0), instances=1), {"answer": "string[]"})


def sample_path(config: str, split: str = "validation", folder: Path = SAMPLE_DIR) -> Path:
    return folder / f"{config}_{split}.parquet"


def sample_files(seed: int = DEFAULT_SEED) -> dict[str, bytes]:
    """The three parquet files (official schema, ``img`` an HF Image) by file name."""
    return {
        sample_path(config, folder=Path()).name: parquet_bytes(rows, features(rows))
        for config, rows in build_rows(seed).items()
    }


def main(argv: list[str] | None = None) -> None:
    """Command line: write the three parquet files of the sample (``--seed``) into ``--output``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--output", type=Path, default=SAMPLE_DIR)
    arguments = parser.parse_args(argv)
    arguments.output.mkdir(parents=True, exist_ok=True)
    for name, content in sample_files(arguments.seed).items():
        (arguments.output / name).write_bytes(content)
        logger.info(f"wrote {arguments.output / name}")


if __name__ == "__main__":
    main()
