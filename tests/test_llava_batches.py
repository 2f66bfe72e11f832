"""The pack's LLaVA on transformers answers batches as it answers one request at a time: prompts padded on
the left with their attention masks (tiny random LLaVA, requests of different lengths, with and without
images)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.slow


class Request:
    def __init__(self, context: str, doc_id: int) -> None:
        gen_kwargs = {"max_new_tokens": 6, "temperature": 0, "until": ["\n\n"]}
        self.args = (context, gen_kwargs, visual, doc_id, "toy", "test")


def visual(doc: dict) -> list:
    return [doc["image"]] if doc["image"] is not None else []


def test_batches_give_the_answers_of_one_request_at_a_time(tiny_llava_dir: Path) -> None:
    from lmms_eval_tasks.models.llava_transformers import LlavaTransformers

    colours = ["red", "green", "blue", "white", None, "black", "yellow"]
    docs = [
        {"image": Image.new("RGB", (40 + 9 * i, 30), colour) if colour else None}
        for i, colour in enumerate(colours)
    ]
    questions = ["What is it?", "Describe the colour of this picture in a few words please.", "Why?"]
    requests = [Request(questions[i % 3] + " " * (i % 2), i) for i in range(len(docs))]
    answers = {}
    for batch_size in (1, 3):
        model = LlavaTransformers(pretrained=str(tiny_llava_dir), device="cpu", batch_size=batch_size)
        model.task_dict = {"toy": {"test": docs}}
        answers[batch_size] = model.generate_until(requests)
    assert len(answers[1]) == len(docs) and any(answers[1])
    assert answers[3] == answers[1]
