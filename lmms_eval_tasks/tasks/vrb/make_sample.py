"""The bundled VRB sample: VQAv2-style questions over generated shape scenes, with 10 annotator answers
that disagree on purpose (leave-one-out accuracy and normalisation both matter); deterministic."""

from __future__ import annotations

import random
from typing import Any

from lmms_eval_tasks.framework import sample_data

SEED = 0
SIZE = 160
SAMPLE_FILE = "vrb_sample.parquet"
# (corruption, severities) of the sample tasks: one noise, one blur and one attribute corruption, all five
# severities each, so every robustness sub-metric is computable on the sample.
SAMPLE_CORRUPTIONS = ("gaussian_noise", "defocus_blur", "brightness")
_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}

# Per scene: (shape, colour, count) drawn on a background colour.
SCENES: list[list[tuple[str, str, int]]] = [
    [("circle", "red", 2), ("square", "blue", 1)],
    [("triangle", "green", 3), ("circle", "yellow", 1)],
    [("square", "purple", 4)],
    [("circle", "orange", 1), ("triangle", "blue", 2)],
]


def _draw(rng: random.Random, shapes: list[tuple[str, str, int]]) -> Any:
    image, draw = sample_data.canvas(SIZE, SIZE, (235, 235, 235))
    cells = rng.sample(range(16), sum(count for _, _, count in shapes))
    for kind, colour, count in shapes:
        for _ in range(count):
            cell = cells.pop()
            centre = ((cell % 4) * 40 + 20 + rng.randint(-3, 3), (cell // 4) * 40 + 20 + rng.randint(-3, 3))
            sample_data.draw_shape(draw, kind, centre, rng.randint(11, 15), sample_data.COLOURS[colour])
    return image


def _answers(
    rng: random.Random, consensus: str, variants: list[str], wrong: list[str]
) -> list[dict[str, Any]]:
    """10 annotator answers: mostly the consensus, some spelled differently, one or two wrong."""
    answers = [consensus] * 10
    for position in rng.sample(range(10), 3):
        answers[position] = rng.choice(variants)
    for position in rng.sample(range(10), rng.randint(0, 2)):
        answers[position] = rng.choice(wrong)
    return [
        {"answer": answer, "answer_confidence": rng.choice(["yes", "yes", "maybe"]), "answer_id": index + 1}
        for index, answer in enumerate(answers)
    ]


def _plural(kind: str) -> str:
    return kind + "s"


def rows() -> list[dict[str, Any]]:
    """The sample's rows (VQAv2 validation schema plus ``image``)."""
    rng = random.Random(SEED)
    result: list[dict[str, Any]] = []
    absent_kinds = {"circle", "square", "triangle"}
    for scene_index, shapes in enumerate(SCENES):
        image_id = 900_000 + scene_index
        cell = sample_data.image_cell(_draw(rng, shapes))
        kind, colour, count = shapes[0]
        present = {shape for shape, _, _ in shapes}
        asked = sorted(absent_kinds - present)[0] if scene_index % 2 else sorted(present)[0]
        questions = [
            (
                f"How many {_plural(kind)} are there?",
                "how many",
                "number",
                str(count),
                [_NUMBER_WORDS[count], f"{count} {kind if count == 1 else _plural(kind)}"],
                [str(count + 1)],
            ),
            (
                f"What color is the {kind}?" if count == 1 else f"What color are the {_plural(kind)}?",
                "what color is the" if count == 1 else "what color are the",
                "other",
                colour,
                [colour.capitalize(), f"{colour}."],
                ["dark " + colour],
            ),
            (
                f"Is there a {asked} in the picture?",
                "is there a",
                "yes/no",
                "yes" if asked in present else "no",
                ["Yes" if asked in present else "No"],
                ["no" if asked in present else "yes"],
            ),
        ]
        for offset, (question, question_type, answer_type, consensus, variants, wrong) in enumerate(
            questions
        ):
            result.append(
                {
                    "question_type": question_type,
                    "multiple_choice_answer": consensus,
                    "answers": _answers(rng, consensus, variants, wrong),
                    "image_id": image_id,
                    "answer_type": answer_type,
                    "question_id": image_id * 1000 + offset,
                    "question": question,
                    "image": cell,
                }
            )
    return result


def features() -> Any:
    """The HF features of the sample (those of ``lmms-lab/VQAv2``'s validation split)."""
    from datasets import Features, Image, Value

    return Features(
        {
            "question_type": Value("string"),
            "multiple_choice_answer": Value("string"),
            "answers": [
                {"answer": Value("string"), "answer_confidence": Value("string"), "answer_id": Value("int64")}
            ],
            "image_id": Value("int64"),
            "answer_type": Value("string"),
            "question_id": Value("int64"),
            "question": Value("string"),
            "image": Image(),
        }
    )


def sample_files() -> dict[str, bytes]:
    """{file name under sample/: bytes} of the bundled sample."""
    return {SAMPLE_FILE: sample_data.parquet_bytes(rows(), features())}
