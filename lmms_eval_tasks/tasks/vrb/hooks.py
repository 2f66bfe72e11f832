"""lmms-eval hooks for VRB: seeded VQAv2 subset, the corruption applied when an image is loaded, prompts,
one ``score`` record per question, aggregation; run parameters come from ``config.run_parameters``."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from typing import Any

from lmms_eval_tasks.corruptions import VRB_PAPER_CORRUPTIONS
from lmms_eval_tasks.framework.dataset_contract import image_of
from lmms_eval_tasks.framework.hook_factory import TaskHooks
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.sent_images import with_file
from lmms_eval_tasks.tasks.vrb import scoring
from lmms_eval_tasks.tasks.vrb.config import PROMPTS, run_parameters
from lmms_eval_tasks.tasks.vrb.image_cache import shared_memo

# The host's vqav2 prompt (lmms_eval/tasks/vqav2/_default_template_vqav2_yaml).
VQAV2_POST_PROMPT = "\nAnswer the question using a single word or phrase."
LLAVA_PROMPT = (Path(__file__).resolve().parent / "llava_prompt.txt").read_text(encoding="utf-8")
LEVEL_TASK = re.compile(
    r"^vrb(?P<sample>_sample)?_(?:(?P<clean>clean)|(?P<corruption>[a-z_]+?)_s(?P<severity>[1-5]))$"
)
# Frequent VQAv2 "other" answers: the random baseline's answer space for non-yes/no, non-number questions.
OTHER_ANSWERS = (
    "white", "black", "red", "blue", "green", "brown", "gray", "yellow", "orange", "pink", "tennis",
    "baseball", "frisbee", "pizza", "dog", "cat", "man", "table", "grass", "water", "wood", "left", "right",
)  # fmt: skip


def task_level(task: str) -> tuple[str, int]:
    """(corruption, severity) of a VRB task: ``vrb_clean`` -> ("clean", 0), ``vrb_snow_s3`` -> ("snow", 3)."""
    match = LEVEL_TASK.match(task)
    if match is None or (not match["clean"] and match["corruption"] not in VRB_PAPER_CORRUPTIONS):
        raise ValueError(
            f"{task!r} is not a VRB task (vrb[_sample]_clean or vrb[_sample]_<corruption>_s<1..5>)"
        )
    return ("clean", 0) if match["clean"] else (match["corruption"], int(match["severity"]))


def is_sample_task(task: str) -> bool:
    """True for the bundled-sample tasks (``vrb_sample_*``): no subset draw."""
    return task.startswith("vrb_sample_")


def select_subset(image_ids: list[Any], images: int, seed: int) -> list[int]:
    """Row indices of the questions on ``images`` image ids drawn with ``random.Random(seed)`` from the
    sorted distinct ids (all rows when there are fewer images); dataset order is kept."""
    distinct = sorted(set(image_ids))
    if images >= len(distinct):
        return list(range(len(image_ids)))
    chosen = set(random.Random(seed).sample(distinct, images))
    return [index for index, image_id in enumerate(image_ids) if image_id in chosen]


def prepare_docs(dataset: Any, task: str) -> Any:
    """The seeded image subset (the same questions at every level); the bundled sample is used whole."""
    task_level(task)
    if is_sample_task(task):
        return dataset
    if "image_id" not in dataset.column_names:
        raise RecordError(task, "image_id", f"the dataset has no image_id column ({dataset.column_names})")
    parameters = run_parameters()
    indices = select_subset(dataset["image_id"], parameters["subset_images"], parameters["seed"])
    return dataset.select(indices)


def image_seed(seed: int, image_id: Any) -> int:
    """The corruption seed of one image: BLAKE2b of (run seed, image id), 63 bits. The engine mixes in the
    corruption and the severity, so each (profile, corruption, severity, seed, image) is reproducible."""
    digest = hashlib.blake2b(f"vrb:{int(seed)}:{image_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def corrupted_image(
    image: Any, corruption: str, severity: int, seed: int, image_id: Any, profile: str
) -> Any:
    """``image`` (PIL) under one corruption level as PIL RGB (severity 0: clean); under ``vrb_official``
    decoded from the quality-95 JPEG the official pipeline saves, carrying it (``sent_images``)."""
    from PIL import Image

    rgb = image.convert("RGB")
    if severity == 0:
        return rgb
    from lmms_eval_tasks.corruptions.engine import SAVED_AS_JPEG, corrupt, saved_file

    if profile in SAVED_AS_JPEG:  # the official pipeline's quality-95 JPEG file: its pixels, and its bytes
        data = saved_file(rgb, corruption, severity, seed=image_seed(seed, image_id), profile=profile)
        return with_file(data, "image/jpeg")  # for clients that send files (``openai_pipelined``)
    return Image.fromarray(
        corrupt(rgb, corruption, severity, seed=image_seed(seed, image_id), profile=profile)
    )


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The question's image under its task's corruption level (applied now, deterministically)."""
    corruption, severity = task_level(HOOKS.task_of(doc))
    question = doc.get("question_id", "?")
    image = doc.get("image")
    if image is None:
        raise RecordError(question, "image", "missing")
    if doc.get("image_id") is None:
        raise RecordError(question, "image_id", "missing (the corruption seed is derived from it)")
    parameters = run_parameters()
    seed, profile = parameters["seed"], parameters["profile"]
    key = (str(doc["image_id"]), getattr(image, "size", None), corruption, severity, seed, profile)

    def load_and_corrupt() -> Any:
        loaded = image_of("vrb", doc, "image", question)  # the pack's one loader (16-bit, alpha, ... to RGB)
        return corrupted_image(loaded, corruption, severity, seed, doc["image_id"], profile)

    try:
        return [shared_memo().get(key, load_and_corrupt)]  # once per image and level for all its questions
    except RecordError:
        raise
    except (OSError, ValueError, TypeError) as error:
        raise RecordError(question, "image", f"cannot load or corrupt: {error}") from error


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The official LLaVA prompt (``prompt: vrb_llava``) or the host's VQAv2 prompt (``prompt: vqav2``)."""
    kwargs = lmms_eval_specific_kwargs or {}
    prompt = run_parameters()["prompt_override"] or kwargs.get("prompt", "vrb_llava")
    question = str(doc["question"])
    if prompt == "vrb_llava":
        return LLAVA_PROMPT.replace("{question}", question)
    if prompt == "vqav2":
        return f"{kwargs.get('pre_prompt', '')}{question}{kwargs.get('post_prompt', VQAV2_POST_PROMPT)}"
    raise ValueError(f"unknown VRB prompt {prompt!r}; expected one of {list(PROMPTS)}")


def doc_to_target(doc: dict[str, Any]) -> str:
    """The consensus answer (shown in the host's samples log; scoring reads all 10 answers)."""
    return str(doc.get("multiple_choice_answer", ""))


def _answers(doc: dict[str, Any]) -> list[str]:
    value, question = doc.get("answers"), doc.get("question_id", "?")
    if not isinstance(value, list) or not value:
        raise RecordError(question, "answers", f"expected the human answers, got {value!r:.80}")
    answers = []
    for item in value:
        answer = item.get("answer") if isinstance(item, dict) else item
        if not isinstance(answer, str):
            raise RecordError(question, "answers", f"an answer is not a string: {item!r:.80}")
        answers.append(answer)
    return answers


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """One ``score`` record: the question's fields, its level, the run parameters and the model's text."""
    corruption, severity = task_level(task)
    question = doc.get("question_id", "?")
    record: dict[str, Any] = {}
    for field in ("question_id", "multiple_choice_answer", "question_type", "answer_type"):
        if doc.get(field) is None:
            raise RecordError(question, field, "missing from the document")
        record[field] = doc[field]
    parameters = run_parameters()
    record.update(answers=_answers(doc), corruption=corruption, severity=severity)
    record.update(image_id=doc.get("image_id"), question=doc.get("question"))
    record.update(profile=parameters["profile"], seed=parameters["seed"])
    prediction = results[0] if results else ""
    record["prediction"] = prediction if isinstance(prediction, str) else str(prediction)
    return record


def task_settings(task: str) -> dict[str, Any]:
    """Every run parameter, recorded in the task's (or group's) report (its scoring options are added by
    the hook runtime from ``config.score_options``)."""
    parameters = run_parameters()
    settings: dict[str, Any] = {**parameters}
    if is_sample_task(task):
        settings["subset_images"] = None  # the bundled sample is used whole
    try:
        corruption, severity = task_level(task)
        settings["level"] = {"corruption": corruption, "severity": severity}
    except ValueError:
        settings["level"] = None  # a group: many levels
    return settings


def report_details(
    records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any
) -> dict[str, Any]:
    """What only a run knows: the corruption profile and seed it applied to the images (environment), and
    that a sample task's data are the bundled generated sample."""
    parameters = run_parameters()
    levels = {scoring.level_key(record["corruption"], record["severity"]) for record in records}
    corruption = {
        "profile": parameters["profile"],
        "seed": parameters["seed"],
        "per_image_seed": "blake2b('vrb:<seed>:<image_id>') mixed with corruption and severity by the engine",
        "levels": sorted(levels),
    }
    details: dict[str, Any] = {"corruption": corruption, "pack_seeds": {"vrb_seed": parameters["seed"]}}
    if task == "vrb_sample" or is_sample_task(task):  # the group's report too
        details["deviations"] = ["bundled generated sample data, not the VQAv2 validation subset"]
    return details


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """The random baseline's answer in the question's answer space: yes/no, a count 0..10, or a word."""
    answer_type = str(doc.get("answer_type", ""))
    if answer_type == "yes/no":
        return rng.choice(("yes", "no"))
    if answer_type == "number":
        return str(rng.randint(0, 10))
    return rng.choice(OTHER_ANSWERS)


HOOKS = TaskHooks(
    "vrb", make_record, task_settings=task_settings, prepare_docs=prepare_docs, report_details=report_details
)
process_results = HOOKS.process_results
