"""Thin lmms-eval hooks for the HallusionBench tasks (the pack's one hook factory): documents, prompts and
score records; the metrics are ``scoring``'s, the leaderboard file is written next to the report."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework import hook_factory
from lmms_eval_tasks.framework.dataset_contract import image_of
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.tasks.hallusionbench import BENCHMARK, scoring
from lmms_eval_tasks.tasks.hallusionbench.config import TASKS, no_verdict_option

HF_DATASET = "lmms-lab-encoder/HallusionBench"  # the host 0.7.3 reads this id (moved from lmms-lab/)
NON_IMAGE_SPLIT = "non_image"
SAMPLE_NON_IMAGE = Path(__file__).resolve().parent / "sample" / "non_image.parquet"
LEADERBOARD_FILE = "HallusionBench_result.json"


# What each task lists in YAML (the host's results): the headline metrics. Every other metric (easy/hard,
# bias, consistency, per category and subcategory) is in the pack's report and in `score`.
OFFICIAL_RESULT_KEYS: tuple[str, ...] = BENCHMARK.headline_metrics  # declared once, in the registry entry
VLMEVALKIT_RESULT_KEYS: tuple[str, ...] = (*scoring.VLMEVALKIT_METRICS, "unjudged_verdicts", "llm_matched")
RESULT_KEYS = {"official": OFFICIAL_RESULT_KEYS, "vlmevalkit": VLMEVALKIT_RESULT_KEYS}
HIGHER_IS_BETTER = frozenset({"aAcc", "fAcc", "qAcc", "overall"})


def _document_label(doc: dict[str, Any]) -> str:
    """The official question key (category_subcategory_set_figure_question) naming a document in errors."""
    return "_".join(str(doc.get(name)) for name in scoring.QUESTION_KEY)


def doc_to_visual(doc: dict[str, Any]) -> list:
    """The question's image as RGB (none for VS no-image questions); a missing or undecodable image on an
    image question raises a RecordError naming the question."""
    if doc.get("image") is None:
        if str(doc.get("visual_input", "")).strip() == "0":
            return []
        raise RecordError(
            _document_label(doc),
            "image",
            f"missing on an image question (visual_input {doc.get('visual_input')!r})",
        )
    return [image_of("hallusionbench", doc, "image", _document_label(doc))]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The raw official question (pre/post prompts default to empty)."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}{kwargs.get('post_prompt', '')}"


def concatenate_non_image(image_split, non_image_split):
    """The image split followed by the non_image split (its questions get ``image`` None): all 1129."""
    from datasets import Dataset, concatenate_datasets

    if any(value == "0" for value in image_split["visual_input"]):
        logger.info(
            "HallusionBench: the split already holds no-image questions; not adding the non_image split"
        )
        return image_split
    columns = image_split.column_names
    rows = [{name: None if name == "image" else row.get(name) for name in columns} for row in non_image_split]
    extra = Dataset.from_list(rows, features=image_split.features)
    return concatenate_datasets([image_split, extra])


def _non_image_split(task: str) -> Any:
    """The ``non_image`` split of the dataset the host loaded for ``task``; outside the pack's launcher the
    default id, with a warning (an overridden ``dataset_path`` cannot be seen there)."""
    from lmms_eval_tasks.reporting import datasets_read

    loaded = datasets_read.loading_task_dataset()
    if loaded is not None:
        if NON_IMAGE_SPLIT in loaded:
            source = datasets_read.loading_task()
            datasets_read.record(task, datasets_read.describe(loaded[NON_IMAGE_SPLIT], source))
            return loaded[NON_IMAGE_SPLIT]
        raise ValueError(
            f"{task}: the task's dataset has no {NON_IMAGE_SPLIT!r} split (splits: {sorted(loaded)}); "
            f"fix: point dataset_path/dataset_kwargs at a copy of {HF_DATASET} with both splits "
            f"(image, {NON_IMAGE_SPLIT})"
        )
    from datasets import load_dataset

    source: dict[str, Any] = {"path": HF_DATASET}
    if task.endswith("_sample"):
        source = {"path": "parquet", "data_files": str(SAMPLE_NON_IMAGE)}
    logger.warning(
        f"{task}: not run through the pack's launcher; reading {NON_IMAGE_SPLIT} from {source['path']} "
        "(an overridden dataset_path is not followed)"
    )
    return load_dataset(**source, split="train" if task.endswith("_sample") else NON_IMAGE_SPLIT)


def process_docs_sample(dataset):
    """Add the bundled sample's no-image questions to its image questions (the same layout as HF)."""
    from datasets import load_dataset

    return concatenate_non_image(
        dataset, load_dataset("parquet", data_files=str(SAMPLE_NON_IMAGE), split="train")
    )


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """The official fields of ``doc`` plus the model's answer and the task name."""
    record = {name: doc.get(name) for name in scoring.OFFICIAL_FIELDS}
    prediction = results[0] if results else ""
    record["prediction"] = prediction if isinstance(prediction, str) else str(prediction)
    record["task"] = task
    return record


def prepare_docs(dataset: Any, task: str) -> Any:
    """Official-protocol tasks add the no-image questions to the image split (1129, or the sample's 29)."""
    if TASKS[task].variant != "official":
        return dataset
    return concatenate_non_image(dataset, _non_image_split(task))


def metric_keys(task: str) -> tuple[str, ...]:
    """The keys a task lists in YAML (headline metrics; every metric is in the report and `score`)."""
    return RESULT_KEYS[TASKS[task].variant]


def report_details(records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any) -> dict:
    """What only a run knows: the bundled sample is not the dataset."""
    if task.endswith("_sample"):
        return {"deviations": ["bundled generated sample data, not the HallusionBench dataset"]}
    return {}


def task_settings(task: str) -> dict[str, Any]:
    """What a task's report records as its settings: the scoring variant and the judge kind."""
    settings = {"variant": TASKS[task].variant, "judge": TASKS[task].judge or "auto"}
    if TASKS[task].variant == "official":
        settings["no_verdict"] = no_verdict_option()
    return settings


def leaderboard_files(records: list[dict[str, Any]], task: str) -> dict[str, str]:
    """The official result JSON (the 11 fields plus ``model_prediction``), next to the task's report."""
    rows = [
        {
            **{name: record.get(name) for name in scoring.OFFICIAL_FIELDS},
            "model_prediction": record.get("prediction", ""),
        }
        for record in records
    ]
    return {LEADERBOARD_FILE: json.dumps(rows, indent=2, ensure_ascii=False)}


HOOKS = hook_factory.TaskHooks(
    "hallusionbench",
    make_record,
    task_settings=task_settings,
    metric_keys=metric_keys,
    prepare_docs=prepare_docs,
    report_details=report_details,
    extra_files=leaderboard_files,
)
process_results = HOOKS.process_results


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """The random-guess baseline's answer: "Yes" or "No" with equal probability."""
    return rng.choice(("Yes", "No"))
