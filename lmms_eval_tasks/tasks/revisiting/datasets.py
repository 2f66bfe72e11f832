"""What differs between TDIUC, TallyQA and DVQA beyond their scorers: one ``RevisitingDataset`` each, the
settings of the family's one machinery (``shared_tasks``, ``generate``, ``prepare``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.preparing import DatasetKind
from lmms_eval_tasks.framework.screening import Screening
from lmms_eval_tasks.framework.taskgen import greedy_generation
from lmms_eval_tasks.tasks.dvqa.scoring import TEMPLATES
from lmms_eval_tasks.tasks.revisiting.scoring import choice_field
from lmms_eval_tasks.tasks.tallyqa.scoring import CLIP_MAX
from lmms_eval_tasks.tasks.tdiuc.scoring import ABSURD_ANSWER, QUESTION_TYPES, wordnet


@dataclass(frozen=True)
class RevisitingDataset:
    """One dataset of the family: ``record_fields`` copied into records (first three required),
    ``deviations``, ``descriptions``, ``report_details`` and ``launch_check`` (WordNet)."""

    name: str
    prompts: Mapping[str, str]
    record_fields: tuple[str, ...]
    target_field: str
    deviations: tuple[str, ...]
    descriptions: Mapping[str, str]
    preparer: DatasetKind
    parsers: tuple[ParserEntry, ...]
    screening: Screening
    random_answer: Callable[[str, dict[str, Any], random.Random], str]
    report_settings: Mapping[str, Any] = field(default_factory=dict)
    lower_is_better: frozenset[str] = frozenset()
    report_details: Callable[[list[dict[str, Any]], dict[str, Any], str, Any], dict[str, Any]] | None = None
    launch_check: Callable[[], str | None] | None = None


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

# The paper's prompts (``inference_code/*`` and ``GPT-inference/*`` of ``KevinLuJian/MLLM_supplemental``):
# ``hf`` for open models, ``llava15`` LLaVA-1.5's text inside its chat template, ``gpt`` the API models'.
TDIUC_INSTRUCTION = (
    "Please answer the question in one word, answer 'doesnotapply' if you believe the question is not "
    "related to the image, or cannot be answered."
)
TDIUC_GPT_INSTRUCTION = (
    "please answer in one word, answer 'doesnotapply' if you believe the question is not related to the "
    "image, or cannot be answered."
)
ONE_WORD = "please answer in one word"
ONE_WORD_PROMPTS = {
    "hf": "{question}, " + ONE_WORD,
    "llava15": " {question}, " + ONE_WORD + " ",
    "gpt": "{question}, " + ONE_WORD + ".",
}
_SCORING = "lmms_eval_tasks.tasks.{}.scoring:{}".format


def _both_protocols(
    name: str, returns: tuple[str, ...], default: dict[str, Any], official: dict[str, Any]
) -> tuple[ParserEntry, ParserEntry]:
    """The parser ``<dataset>.<function>`` called as the default protocol calls it, then as the official."""
    target = _SCORING(*name.split("."))
    return (
        ParserEntry(name, target, returns, default),
        ParserEntry(f"{name}[official]", target, returns, {**official, "protocol": "official"}),
    )


def _question(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """The fields every dataset's prepared row starts with: ``question_id`` and ``question``, checked."""
    return {
        "question_id": require_field(entry, "question_id", index, (int, str)),
        "question": require_field(entry, "question", index, str),
    }


# The random-guess baseline's answer space per question type (absurd questions draw from another type's
# space, or answer "doesnotapply" as often as any type's question would: 1 in 12).
TDIUC_ANSWER_SPACES: dict[str, tuple[str, ...]] = {
    "activity_recognition": ("eating", "sitting", "standing", "walking", "playing", "riding", "sleeping"),
    "attribute": ("wood", "metal", "plastic", "glass", "striped", "large", "small"),
    "color": ("white", "black", "red", "blue", "green", "yellow", "brown", "gray", "orange", "pink"),
    "counting": tuple(str(number) for number in range(11)),
    "object_presence": ("yes", "no"),
    "object_recognition": ("dog", "cat", "car", "bus", "pizza", "phone", "umbrella", "chair", "bottle"),
    "positional_reasoning": ("left", "right", "table", "floor", "wall", "grass", "road"),
    "scene_recognition": ("kitchen", "bathroom", "street", "beach", "park", "bedroom", "field"),
    "sentiment_understanding": ("happy", "sad", "calm", "angry", "excited"),
    "sport_recognition": ("tennis", "baseball", "skiing", "surfing", "soccer", "frisbee", "skateboarding"),
    "utility_affordance": ("cutting", "sitting", "eating", "writing", "drinking", "cooking"),
}


def tdiuc_random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random answer from the question type's answer space (see TDIUC_ANSWER_SPACES)."""
    if rng.randrange(len(QUESTION_TYPES)) == 0:
        return ABSURD_ANSWER
    question_type = str(doc.get("question_type", ""))
    if question_type not in TDIUC_ANSWER_SPACES:
        question_type = rng.choice(sorted(TDIUC_ANSWER_SPACES))
    return rng.choice(TDIUC_ANSWER_SPACES[question_type])


def coco_file(image_id: int) -> str:
    """COCO val2014 file name of an image id: ``COCO_val2014_000000000042.jpg``."""
    return f"COCO_val2014_{image_id:012d}.jpg"


def _image_id(entry: dict[str, Any], index: int | str) -> int:
    value = require_field(entry, "image_id", index, (int, str))
    if isinstance(value, bool) or (isinstance(value, str) and not value.isdigit()):
        raise RecordError(index, "image_id", f"expected a COCO image id, got {value!r}")
    return int(value)


def tdiuc_images(entry: dict[str, Any]) -> list[str]:
    """``val2014/COCO_val2014_<id>.jpg`` (the authors' layout) or the file directly in --images."""
    name = coco_file(_image_id(entry, entry.get("question_id", "?")))
    return [name, f"val2014/{name}"]


def tdiuc_row(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One prepared TDIUC row: the slim annotation's fields, typed, plus ``image_file``."""
    question_type = choice_field(entry, "question_type", index, QUESTION_TYPES, "TDIUC question type")
    image_id = _image_id(entry, index)
    return {
        **_question(entry, index),
        "image_id": image_id,
        "labeled_answer": require_field(entry, "labeled_answer", index, str),
        "question_type": question_type,
        "image_file": coco_file(image_id),
    }


def wordnet_problem() -> str | None:
    """None when WordNet (TDIUC's synonym matching) is ready, found or installed now; else the one-line fix.
    The launcher runs it before any TDIUC task (the registry entry's ``launch_check``)."""
    from lmms_eval_tasks.wordnet import WordNetMissing

    try:
        wordnet()
    except WordNetMissing as error:
        return f"lmms_eval: {error}"
    return None


TDIUC = RevisitingDataset(
    name="tdiuc",
    prompts={
        "hf": "{question}, " + TDIUC_INSTRUCTION,
        "llava15": "{question}," + TDIUC_INSTRUCTION,
        "gpt": "{question}, " + TDIUC_GPT_INSTRUCTION,
    },
    record_fields=("question_id", "question_type", "labeled_answer", "question", "image_id", "image_file"),
    target_field="labeled_answer",
    deviations=(
        "multi-word answers are also looked up in WordNet with underscores (the official script only "
        "strips spaces, so 'teddy bear' never reaches WordNet)",
        "macro_accuracy averages the question types present (the official script divides by 12)",
    ),
    descriptions={
        "tdiuc": "TDIUC slim subset (27,336 questions, 12 types) from the folder prepared by "
        "`lmms-eval-tasks prepare tdiuc` ($LMMS_EVAL_TASKS_DATA_TDIUC); exact or WordNet-synonym match",
        "tdiuc_sample": "TDIUC bundled sample (15 generated questions incl. absurd ones and synonyms), "
        "scored like tdiuc",
    },
    preparer=DatasetKind(
        name="tdiuc",
        help="TDIUC: TDIUC_sampling.json (the paper's slim subset) + the COCO val2014 image folder",
        required_fields=("question_id", "question", "image_id", "labeled_answer", "question_type"),
        image_candidates=tdiuc_images,
        convert=tdiuc_row,
    ),
    parsers=(
        *_both_protocols("tdiuc.is_correct", ("bool",), {"label": "dog"}, {"label": "3"}),
        ParserEntry("revisiting.digits_to_words", _SCORING("revisiting", "digits_to_words"), ("str",)),
    ),
    screening=Screening(yes_no=True, numbers=True),
    random_answer=tdiuc_random_answer,
    report_settings={"matching": "exact after normalisation, or a shared WordNet synset"},
    launch_check=wordnet_problem,
)


def tallyqa_random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random count from 0 to 15 (the range the scorer clips to), in digits."""
    return str(rng.randint(0, CLIP_MAX))


def tallyqa_images(entry: dict[str, Any]) -> list[str]:
    """The entry's relative ``image`` path, then its file name alone (a flat image folder)."""
    image = str(entry.get("image", ""))
    name = PurePosixPath(image).name
    return [image, name] if name and name != image else [image]


def tallyqa_row(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One prepared TallyQA row: every field, typed; the file's ``image`` path becomes ``image_file``."""
    answer = require_field(entry, "answer", index, int)
    if isinstance(answer, bool) or answer < 0:
        raise RecordError(index, "answer", f"expected a non-negative count, got {answer!r}")
    row = {key: value for key, value in entry.items() if key != "image"}
    row.update(
        _question(entry, index),
        answer=answer,
        issimple=require_field(entry, "issimple", index, bool),
        image_file=require_field(entry, "image", index, str),
    )
    return row


def tallyqa_report_details(
    records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any
) -> dict:
    """With an output folder, the accuracy-by-count plot (the paper's Figs. 8-9) next to the report."""
    from lmms_eval_tasks.framework.task_pipeline import output_dir
    from lmms_eval_tasks.tasks.tallyqa.scoring import plot_accuracy_by_count

    folder = output_dir(args) if args is not None else None
    if folder is None:
        return {}
    path = Path(folder) / f"{task}_accuracy_by_count.png"
    plot_accuracy_by_count(metrics, path, title=task)
    return {"accuracy_by_count_plot": str(path)}


TALLYQA = RevisitingDataset(
    name="tallyqa",
    prompts=ONE_WORD_PROMPTS,
    record_fields=("question_id", "answer", "issimple", "question", "image_id", "image_file", "data_source"),
    target_field="answer",
    deviations=(
        "rmse is the true RMSE; the official script's (and the paper's) 'RMSE' is a mean squared error",
        "decimal answers keep their point (the official script deletes it: '2.5' reads 25)",
        "number words past fifteen are parsed (unparsed in the official script)",
    ),
    descriptions={
        "tallyqa": "TallyQA test set (38,589 counting questions, simple and complex) from the folder "
        "prepared by `lmms-eval-tasks prepare tallyqa` ($LMMS_EVAL_TASKS_DATA_TALLYQA); accuracy and RMSE "
        "per split",
        "tallyqa_sample": "TallyQA bundled sample (15 counting questions on generated shape scenes), "
        "scored like tallyqa",
    },
    preparer=DatasetKind(
        name="tallyqa",
        help="TallyQA: test.json (all 38,589 test questions) + the folder holding VG_100K*/ and val2014/",
        required_fields=("image", "question", "question_id", "answer", "issimple"),
        image_candidates=tallyqa_images,
        convert=tallyqa_row,
    ),
    parsers=(*_both_protocols("tallyqa.parse_count", ("float", "NoneType"), {}, {}),),
    screening=Screening(numbers=True),
    random_answer=tallyqa_random_answer,
    report_settings={"rmse_clip": [0, CLIP_MAX]},
    lower_is_better=frozenset({"simple_rmse", "complex_rmse", "unparsed"}),
    report_details=tallyqa_report_details,
)


def dvqa_random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """Yes or no for yes/no questions (the question starts with a verb), else a number from 0 to 10."""
    first = str(doc.get("question", "")).split(" ", 1)[0].lower()
    if first in ("is", "are", "does", "do"):
        return rng.choice(("yes", "no"))
    return str(rng.randint(0, 10))


def dvqa_images(entry: dict[str, Any]) -> list[str]:
    """``<image>`` directly in --images, or under ``images/`` (DVQA's archive layout)."""
    image = str(entry.get("image", ""))
    return [image, f"images/{image}"]


def dvqa_row(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One prepared DVQA row: typed fields; the file's ``image`` name becomes ``image_file``."""
    template = choice_field(entry, "template_id", index, TEMPLATES, "DVQA template")
    answer = require_field(entry, "answer", index, (str, int, float))
    bbox = entry.get("answer_bbox") or []
    if not isinstance(bbox, list) or not all(isinstance(v, int | float) for v in bbox):
        raise RecordError(index, "answer_bbox", f"expected a list of numbers, got {bbox!r:.80}")
    return {
        **_question(entry, index),
        "template_id": template,
        "answer": answer if isinstance(answer, str) else str(answer),
        "answer_bbox": [float(v) for v in bbox],
        "image_file": require_field(entry, "image", index, str),
    }


DVQA = RevisitingDataset(
    name="dvqa",
    prompts=ONE_WORD_PROMPTS,
    record_fields=("question_id", "template_id", "answer", "question", "image_file"),
    target_field="answer",
    deviations=(
        "decimal answers keep their point ('0.5' is not '5'; the official script deletes every '.')",
    ),
    descriptions={
        "dvqa": "DVQA slim subset (29,043 bar-chart questions) from the folder prepared by "
        "`lmms-eval-tasks prepare dvqa` ($LMMS_EVAL_TASKS_DATA_DVQA); exact match, decimals kept",
        "dvqa_sample": "DVQA bundled sample (19 questions on 3 generated bar charts), scored like dvqa",
    },
    preparer=DatasetKind(
        name="dvqa",
        help="DVQA: DVQA_sampling.json (the paper's slim subset) + DVQA's image folder",
        required_fields=("question", "question_id", "template_id", "answer", "image"),
        image_candidates=dvqa_images,
        convert=dvqa_row,
    ),
    parsers=(
        *_both_protocols("dvqa.is_correct", ("bool",), {"answer": "10"}, {"answer": "10"}),
        ParserEntry(
            "revisiting.official_digits_to_words",
            _SCORING("revisiting", "official_digits_to_words"),
            ("str",),
            {"powers_of_ten": True},
        ),
    ),
    screening=Screening(yes_no=True, numbers=True),
    random_answer=dvqa_random_answer,
)

DATASETS: dict[str, RevisitingDataset] = {dataset.name: dataset for dataset in (TDIUC, TALLYQA, DVQA)}
