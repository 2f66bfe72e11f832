"""Shared hooks of the TDIUC, TallyQA and DVQA tasks: prompts per model, image, prepared data, options
(VQDv1, from the same paper, shares the image, record-field and prepared-data helpers).

Prompts are the paper's (``inference_code/*`` and ``GPT-inference/*`` of ``KevinLuJian/MLLM_supplemental``):
- ``hf``: open models, ``{question}, <instruction>`` (the authors' default layout, also LLaVA-NeXT's text);
- ``llava15``: LLaVA-1.5's text as the authors built it inside ``USER: <image>\\n...\\nASSISTANT:``
  (TDIUC ``{question},<instruction>`` without a space; TallyQA/DVQA `` {question}, <instruction> `` with a
  leading and a trailing space); the chat wrapper itself comes from the model's chat template;
- ``gpt``: the API models' prompt (GPT-4o/GPT-4V: a final period, TDIUC's lower-case "please").
The host picks ``lmms_eval_specific_kwargs[<model>]["prompt"]`` (else ``default``: ``hf``);
``LMMS_EVAL_TASKS_<DATASET>_PROMPT`` overrides it with a variant name or a template containing
``{question}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework.hook_factory import TaskHooks
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.taskgen import greedy_generation

TDIUC_INSTRUCTION = (
    "Please answer the question in one word, answer 'doesnotapply' if you believe the question is not "
    "related to the image, or cannot be answered."
)
TDIUC_GPT_INSTRUCTION = (
    "please answer in one word, answer 'doesnotapply' if you believe the question is not related to the "
    "image, or cannot be answered."
)
ONE_WORD = "please answer in one word"

PROMPTS: dict[str, dict[str, str]] = {
    "tdiuc": {
        "hf": "{question}, " + TDIUC_INSTRUCTION,
        "llava15": "{question}," + TDIUC_INSTRUCTION,
        "gpt": "{question}, " + TDIUC_GPT_INSTRUCTION,
    },
    "tallyqa": {
        "hf": "{question}, " + ONE_WORD,
        "llava15": " {question}, " + ONE_WORD + " ",
        "gpt": "{question}, " + ONE_WORD + ".",
    },
    "dvqa": {
        "hf": "{question}, " + ONE_WORD,
        "llava15": " {question}, " + ONE_WORD + " ",
        "gpt": "{question}, " + ONE_WORD + ".",
    },
}
# The host's model names -> prompt variant (lmms_eval_specific_kwargs). llava_hf also serves LLaVA-NeXT,
# whose text is the "hf" one: such users set LMMS_EVAL_TASKS_<DATASET>_PROMPT=hf.
SPECIFIC_KWARGS: dict[str, dict[str, str]] = {
    "default": {"prompt": "hf"},
    "llava_hf": {"prompt": "llava15"},
    "llava": {"prompt": "llava15"},
    "openai": {"prompt": "gpt"},
    "async_openai": {"prompt": "gpt"},
    "gpt4v": {"prompt": "gpt"},
    "batch_gpt4": {"prompt": "gpt"},
}
GENERATION_KWARGS: dict[str, Any] = greedy_generation(100)


def prompt_env(dataset: str) -> str:
    """``LMMS_EVAL_TASKS_<DATASET>_PROMPT``."""
    return f"LMMS_EVAL_TASKS_{dataset.upper()}_PROMPT"


def resolve_template(dataset: str, kwargs: Mapping[str, Any] | None) -> str:
    """The prompt template in force: the environment override, else the model's variant, else ``hf``."""
    chosen = environment.text(prompt_env(dataset)) or str((kwargs or {}).get("prompt") or "hf")
    if chosen in PROMPTS[dataset]:
        return PROMPTS[dataset][chosen]
    if "{question}" not in chosen:
        raise ValueError(
            f"{dataset} prompt {chosen!r} is neither a variant ({', '.join(PROMPTS[dataset])}) nor a "
            "template containing {question}"
        )
    return chosen


def build_prompt(dataset: str, question: str, kwargs: Mapping[str, Any] | None = None) -> str:
    """The model's text for ``question`` (only ``{question}`` is substituted)."""
    return resolve_template(dataset, kwargs).replace("{question}", question)


def visual_hook(dataset: str):
    """The ``doc_to_visual`` of ``dataset`` (tdiuc, tallyqa, dvqa, vqdv1): the document's image as RGB, by
    the pack's one loader; a missing or undecodable image raises an error naming the question."""
    from lmms_eval_tasks.framework.dataset_contract import image_of

    def doc_to_visual(doc: Mapping[str, Any]) -> list[Any]:
        return [image_of(dataset, doc, "image", doc.get("question_id", "?"))]

    doc_to_visual.__doc__ = f"The {dataset} question's image as RGB; errors name the question."
    return doc_to_visual


def protocol_option(dataset: str) -> dict[str, str]:
    """``{"protocol": ...}`` from ``LMMS_EVAL_TASKS_<DATASET>_PROTOCOL`` ("default" or "official"), or {}."""
    variable = f"LMMS_EVAL_TASKS_{dataset.upper()}_PROTOCOL"
    value = environment.text(variable)
    if not value:
        return {}
    if value not in ("default", "official"):
        raise ValueError(f"{variable}={value!r}: expected default or official")
    return {"protocol": value}


def prepare_docs_for(dataset: str, columns: tuple[str, ...]):
    """A ``prepare_docs(dataset, task)``: the prepared folder's data for the full task, the bundled parquet
    for ``<dataset>_sample``; a missing column raises an error naming the task and the column."""

    def prepare_docs(loaded: Any, task: str) -> Any:
        if task == dataset:
            from lmms_eval_tasks.framework.preparing import load_prepared

            loaded = load_prepared(dataset)
        missing = [column for column in columns if column not in loaded.column_names]
        if missing:
            raise ValueError(
                f"{task}: the dataset has no {', '.join(map(repr, missing))} field(s) "
                f"(columns: {sorted(loaded.column_names)})"
            )
        return loaded

    return prepare_docs


def copy_fields(doc: Mapping[str, Any], fields: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """The record's dataset fields: ``required`` ones must be present (RecordError), the rest when set."""
    record: dict[str, Any] = {}
    for name in fields:
        value = doc.get(name)
        if value is None:
            if name in required:
                raise RecordError(doc.get("question_id", "?"), name, "missing from the document")
            continue
        record[name] = value
    return record


def prediction_of(results: list[Any]) -> str:
    """The model's text (first result; non-strings are stringified)."""
    prediction = results[0] if results else ""
    return prediction if isinstance(prediction, str) else str(prediction)


_DEFAULT_DEVIATIONS: dict[str, tuple[str, ...]] = {
    "tdiuc": (
        "multi-word answers are also looked up in WordNet with underscores (the official script only "
        "strips spaces, so 'teddy bear' never reaches WordNet)",
        "macro_accuracy averages the question types present (the official script divides by 12)",
    ),
    "tallyqa": (
        "rmse is the true RMSE; the official script's (and the paper's) 'RMSE' is a mean squared error",
        "decimal answers keep their point (the official script deletes it: '2.5' reads 25)",
        "number words past fifteen are parsed (unparsed in the official script)",
    ),
    "dvqa": ("decimal answers keep their point ('0.5' is not '5'; the official script deletes every '.')",),
}


def deviations(dataset: str, task: str) -> list[str]:
    """What makes this run's numbers differ from the paper's protocol, for the pack report."""
    items: list[str] = []
    if task.endswith("_sample"):
        items.append(f"bundled generated sample data, not the {dataset} slim subset")
    if protocol_option(dataset).get("protocol") == "official":
        items.append("protocol=official: the authors' evaluation script's numbers, its bugs included")
    else:
        items.extend(_DEFAULT_DEVIATIONS[dataset])
    if environment.text(prompt_env(dataset)):
        items.append(f"prompt overridden by {prompt_env(dataset)}")
    items.append(
        "generation without the authors' repetition_penalty=1.2 (the host's wrappers do not take it)"
    )
    return items


def report_details_for(dataset: str):
    """A ``report_details(records, metrics, task, args)`` that records the run's deviations."""

    def report_details(
        records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any = None
    ) -> dict[str, Any]:
        return {"deviations": deviations(dataset, task)}

    return report_details


@dataclass(frozen=True)
class DatasetHooks:
    """The hooks TDIUC, TallyQA and DVQA share, bound to one dataset: the paper's prompt, the target, one
    ``score`` record per question (``record_fields``, the first ``required`` of them mandatory, plus the
    model's text) and the task settings recorded in the report (``report_settings`` appended)."""

    dataset: str
    record_fields: tuple[str, ...]
    required: int
    target_field: str
    report_settings: Mapping[str, Any] = field(default_factory=dict)

    def doc_to_text(
        self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Mapping[str, Any] | None = None
    ) -> str:
        """The question in the paper's prompt for the model (``prompt`` kwarg: hf, llava15 or gpt)."""
        return build_prompt(self.dataset, str(doc["question"]), lmms_eval_specific_kwargs)

    def doc_to_target(self, doc: Mapping[str, Any]) -> str:
        """The expected answer (shown in the host's samples log)."""
        return str(doc[self.target_field])

    def make_record(self, doc: Mapping[str, Any], results: list[Any], task: str) -> dict[str, Any]:
        """One ``score`` record: the dataset's fields plus the raw model text."""
        record = copy_fields(doc, self.record_fields, self.record_fields[: self.required])
        record["prediction"] = prediction_of(results)
        return record

    def task_settings(self, task: str) -> dict[str, Any]:
        """Scoring options and the prompt in force, recorded in the task's report."""
        return {
            "prompt_override": environment.text(prompt_env(self.dataset)) or None,
            **self.report_settings,
        }

    def task_hooks(self, columns: tuple[str, ...], **options: Any) -> TaskHooks:
        """The dataset's ``TaskHooks``: these records and settings, the prepared (or bundled) docs checked for
        ``columns``, the run's deviations in the report; ``options`` add or replace TaskHooks options."""
        chosen = {
            "task_settings": self.task_settings,
            "prepare_docs": prepare_docs_for(self.dataset, columns),
            "report_details": report_details_for(self.dataset),
            **options,
        }
        return TaskHooks(self.dataset, self.make_record, **chosen)
