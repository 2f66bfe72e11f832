"""The bundled DVQA sample: 19 questions in the slim file's schema on three generated bar charts, answers
computed from the charts' values (docs/revisiting.md); deterministic, ``answer_bbox`` empty."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.framework import sample_data

WIDTH, HEIGHT = 192, 144
SAMPLE_FILE = "dvqa_sample.parquet"
CHARTS: tuple[dict[str, float], ...] = (
    {"ink": 3, "cow": 7, "sun": 5},
    {"gloom": 0.5, "world": 2, "nod": 1.5, "pipe": 4},
    {"apple": 10, "box": 20},
)


def _number(value: float) -> str:
    return f"{value:g}"


def questions(chart: int, values: dict[str, float]) -> list[tuple[str, str, str]]:
    """(template, question, answer) for one chart, every answer derived from ``values``."""
    labels = list(values)
    largest = max(labels, key=values.__getitem__)
    first, second = labels[0], labels[1]
    larger = "yes" if values[first] > values[second] else "no"
    items = [
        ("structure", "How many bars are there?", str(len(values))),
        ("data", f"What is the value of {labels[-1]}?", _number(values[labels[-1]])),
        ("data", "What is the label of the first bar from the left?", first),
        ("reasoning", "Which bar has the largest value?", largest),
        ("reasoning", f"Is the value of {first} larger than the value of {second}?", larger),
    ]
    if chart == 0:
        items.append(("structure", "Are the values in the chart presented in a logarithmic scale?", "no"))
    if chart == 1:
        items.append(("data", f"What is the value of {first}?", _number(values[first])))  # "0.5"
        items.append(("structure", "Does the chart contain any negative values?", "no"))
    if chart == 2:
        total = _number(sum(values.values()))
        items.append(("reasoning", f"What is the sum of the values of {first} and {second}?", total))
    return items


def rows() -> list[dict[str, Any]]:
    """The sample's rows in the slim file's schema plus an ``image`` cell."""
    result: list[dict[str, Any]] = []
    for chart, values in enumerate(CHARTS):
        cell = sample_data.image_cell(sample_data.draw_bar_chart(values, WIDTH, HEIGHT))
        for template, question, answer in questions(chart, values):
            result.append(
                {
                    "question": question,
                    "question_id": 700000 + len(result),
                    "template_id": template,
                    "answer": answer,
                    "answer_bbox": [],
                    "image_file": f"bar_sample_{chart:02d}.png",
                    "image": cell,
                }
            )
    return result


def sample_files() -> dict[str, bytes]:
    """{file name under sample/: bytes} of the bundled sample."""
    return sample_data.sample_parquet(SAMPLE_FILE, rows(), {"answer_bbox": "float64[]"})
