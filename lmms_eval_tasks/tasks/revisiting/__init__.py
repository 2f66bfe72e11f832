"""What the "Revisiting MLLM Evaluation" datasets share: row contract, prompts (VQDv1's too), one set of
hooks, parsers and ``prepare`` told each dataset's settings, text rules, generator; each its own package."""

from collections.abc import Mapping
from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework.dataset_contract import RowField, RowSchema


def question_rows(*fields: RowField, identity: tuple[str, ...] = ("question_id",)) -> RowSchema:
    """A dataset's row contract: ``question_id``, ``question``, its own ``fields``, the image."""
    return RowSchema(
        fields=(
            RowField("question_id", "id"),
            RowField("question", "text"),
            *fields,
            RowField("image", "image"),
        ),
        identity=identity,
        image_note="no EXIF orientation: the authors' loaders open files with PIL.Image.open(...)"
        ".convert('RGB') and the annotations (boxes, sizes) are in the stored pixel layout",
    )


def prompt_env(dataset: str) -> str:
    """``LMMS_EVAL_TASKS_<DATASET>_PROMPT``."""
    return f"LMMS_EVAL_TASKS_{dataset.upper()}_PROMPT"


def resolve_template(
    dataset: str, prompts: Mapping[str, str], kwargs: Mapping[str, Any] | None, default: str = "hf"
) -> str:
    """The prompt template in force: the environment override, else the model's variant, else ``default``
    (a variant of ``prompts``, or a template containing ``{question}``)."""
    chosen = environment.text(prompt_env(dataset)) or str((kwargs or {}).get("prompt") or default)
    if chosen in prompts:
        return prompts[chosen]
    if "{question}" not in chosen:
        raise ValueError(
            f"{dataset} prompt {chosen!r} is neither a variant ({', '.join(prompts)}) nor a template "
            "containing {question}"
        )
    return chosen
