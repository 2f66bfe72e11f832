"""VQDv1 prompts per model (the paper's Table 11, the authors' layouts) and how a task picks one; a user may
pass their own template containing ``{question}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PROMPT_ENV = "LMMS_EVAL_TASKS_VQDV1_PROMPT"
# Prompt per model (paper Table 11): the host picks the entry named like the --model, else "default".
# llava_hf serves LLaVA-1.5 and LLaVA-NeXT alike: LLaVA-NeXT users set LMMS_EVAL_TASKS_VQDV1_PROMPT.
SPECIFIC_KWARGS = {
    "default": {"prompt": "api"},
    "llava_hf": {"prompt": "llava15"},
    "llava": {"prompt": "llava15"},
    "llava_onevision": {"prompt": "llava_next"},
}

API_INSTRUCTION = (
    "Generate a list of bounding box coordinates around the objects mentioned in the prompt if they exist in "
    "the image. Even if the prompt uses a singular verb like `is', generate multiple bounding boxes if "
    "multiple objects satisfy the query. The bounding box list should be formatted as: [[x_min, y_min, "
    "x_max, y_max]], and it can contain zero or more bounding boxes. Only provide the bounding box list, "
    "without any additional descriptions."
)
LLAVA15_INSTRUCTION = (
    "Please answer the question by generating a list of bounding box coordinates around the objects the "
    "question is asking, and if no such object exists in the image, answer: [[]]"
)
LLAVA_NEXT_INSTRUCTION = (
    "Please generate a list of bounding boxes coordinates of the region this query describes. Use the format "
    "[[x_min,y_min,x_max,y_max]....]. Do not respond in sentences, and only generate the bounding boxes. "
    "Respond with an empty list [[]], if no such region exists in the image."
)

# Named templates: "api" is the GPT-4o/GPT-4V prompt (query/instruction layout of GPT-inference/VQDv1.py);
# "llava15" and "llava_next" use the layouts of the authors' LLaVA-1.5 and LLaVA-NeXT inference code
# (the chat wrapper, USER:/ASSISTANT: or [INST], comes from the model's own chat template).
TEMPLATES: dict[str, str] = {
    "api": "query: {question}, instruction: " + API_INSTRUCTION,
    "llava15": "Query: {question},Instruction: " + LLAVA15_INSTRUCTION,
    "llava_next": "Query: \n{question}, prompt: " + LLAVA_NEXT_INSTRUCTION,
}


def resolve_template(kwargs: Mapping[str, Any] | None) -> str:
    """The prompt template: $LMMS_EVAL_TASKS_VQDV1_PROMPT, else the task's ``prompt`` kwarg, else "api"
    (a name of ``TEMPLATES`` or a template with ``{question}``)."""
    from lmms_eval_tasks.tasks.revisiting import resolve_template as family_template

    return family_template("vqdv1", TEMPLATES, kwargs, default="api")


def build_prompt(question: str, kwargs: Mapping[str, Any] | None = None) -> str:
    """The model's text for ``question`` (only ``{question}`` is substituted; other braces kept)."""
    return resolve_template(kwargs).replace("{question}", question)
