"""The bundled TDIUC sample: 15 questions in the slim file's schema on four generated pictures, answers
known by construction: seven types, absurd questions, a synonym label ("telephone") and a multi-word one
("teddy bear": "teddy" right by default, not under the official rule); deterministic."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.framework import sample_data

SIZE = 224
SAMPLE_FILE = "tdiuc_sample.parquet"


def _two_shapes() -> Any:
    image, draw = sample_data.canvas(SIZE, SIZE)
    sample_data.draw_shape(draw, "circle", (60, 112), 36, sample_data.COLOURS["red"])
    sample_data.draw_shape(draw, "square", (164, 112), 36, sample_data.COLOURS["blue"])
    return image


def _three_triangles() -> Any:
    image, draw = sample_data.canvas(SIZE, SIZE)
    for centre in ((56, 70), (168, 70), (112, 160)):
        sample_data.draw_shape(draw, "triangle", centre, 34, sample_data.COLOURS["green"])
    return image


def _sign(draw: Any, text: str, top: int) -> None:
    width, height = sample_data.text_size(text)
    left = (SIZE - width) // 2
    draw.rectangle(
        [left - 10, top - 8, left + width + 10, top + height + 10], outline=sample_data.BLACK, width=2
    )
    sample_data.draw_text(draw, (left, top), text)


def _telephone_and_face() -> Any:
    image, draw = sample_data.canvas(SIZE, SIZE)
    _sign(draw, "TELEPHONE", 30)
    sample_data.draw_shape(draw, "circle", (112, 140), 50, sample_data.COLOURS["yellow"])
    for eye_x in (94, 130):
        draw.ellipse([eye_x - 5, 118, eye_x + 5, 128], fill=sample_data.BLACK)
    draw.arc([82, 120, 142, 170], start=20, end=160, fill=sample_data.BLACK, width=4)
    return image


def _teddy_bear_sign() -> Any:
    image, draw = sample_data.canvas(SIZE, SIZE)
    _sign(draw, "TEDDY BEAR", 100)
    return image


IMAGES = (_two_shapes, _three_triangles, _telephone_and_face, _teddy_bear_sign)
# (image index, question type, question, labelled answer)
QUESTIONS: tuple[tuple[int, str, str, str], ...] = (
    (0, "color", "What color is the circle?", "red"),
    (0, "color", "What color is the square?", "blue"),
    (0, "counting", "How many shapes are there?", "2"),
    (0, "object_presence", "Is there a triangle in the image?", "no"),
    (0, "positional_reasoning", "Which shape is on the left, the circle or the square?", "circle"),
    (0, "absurd", "What is the man holding?", "doesnotapply"),
    (1, "counting", "How many triangles are there?", "3"),
    (1, "object_recognition", "What shape is shown?", "triangle"),
    (1, "object_presence", "Are there triangles in the image?", "yes"),
    (1, "absurd", "What sport is the dog playing?", "doesnotapply"),
    (2, "object_recognition", "Which object is named on the sign?", "telephone"),
    (2, "sentiment_understanding", "What emotion does the face show?", "happy"),
    (3, "object_recognition", "Which toy is named on the sign?", "teddy bear"),
    (3, "color", "What color are the letters on the sign?", "black"),
    (3, "absurd", "What color is the giraffe's hat?", "doesnotapply"),
)


def rows() -> list[dict[str, Any]]:
    """The sample's rows in the prepared dataset's schema."""
    cells = [sample_data.image_cell(draw()) for draw in IMAGES]
    return [
        {
            "question_id": 900000 + index,
            "question": question,
            "image_id": image,
            "labeled_answer": answer,
            "question_type": question_type,
            "image_file": f"tdiuc_sample_{image:02d}.png",
            "image": cells[image],
        }
        for index, (image, question_type, question, answer) in enumerate(QUESTIONS)
    ]


def sample_files() -> dict[str, bytes]:
    """{file name under sample/: bytes} of the bundled sample."""
    return sample_data.sample_parquet(SAMPLE_FILE, rows())
