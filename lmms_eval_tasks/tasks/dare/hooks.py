"""lmms-eval hooks for DARE: prompts, Out-Log choices, per-sample records; a task's identity reaches these
shared hooks as the ``dare_*`` columns its ``process_docs`` adds.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework.dataset_contract import image_of
from lmms_eval_tasks.framework.hook_factory import TaskHooks
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.tasks.dare.grid import TASKS_BY_NAME, TaskSpec, all_tasks
from lmms_eval_tasks.tasks.dare.prompts import build_prompt
from lmms_eval_tasks.tasks.dare.scoring import (
    EXTRA_OPTIONS,
    LETTERS,
    PROMPTS,
    canonical_category,
    format_table,
    gold_letters,
    parse_record,
    score_record,
    summary_table,
)

# Out-Log candidates for the multi-correct setup: every answer set, NONE first, letters in order.
MULTI_CHOICES = ["NONE"] + [
    ", ".join(subset) for size in range(1, 5) for subset in itertools.combinations(LETTERS, size)
]
SINGLE_CHOICES = list(LETTERS)
# Out-Word answers of the random baseline: a word per letter.
RANDOM_WORDS = {"A": "Apple", "B": "Banana", "C": "Cherry", "D": "Date"}


def prepare_docs(dataset: Any, task_name: str) -> Any:
    """The task's docs with its identity in ``dare_*`` columns; binary: one doc per option. Unknown
    categories fail naming the doc (the dataset contract has checked the columns)."""
    task = TASKS_BY_NAME[task_name]
    if getattr(dataset, "_indices", "?") is None:  # the arrow columns as Python values, not row by row
        ids, categories = (dataset.data.table.column(name).to_pylist() for name in ("id", "category"))
    else:
        ids, categories = dataset["id"], dataset["category"]
    for index, (identifier, category) in enumerate(zip(ids, categories, strict=True)):
        if canonical_category(category) is None:
            raise ValueError(
                f"{task.name}: doc {index} (id={identifier!r}): field 'category': unknown {category!r}"
            )
    rows = len(dataset)
    if task.answer_format == "binary":
        # select() with repeated indices keeps one copy of each image; the option letter is a new column.
        dataset = dataset.select([index for index in range(rows) for _ in LETTERS])
        dataset = dataset.add_column("dare_option", [letter for _ in range(rows) for letter in LETTERS])
    count = len(dataset)
    for column, value in (
        ("dare_task", task.name),
        ("dare_setup", task.setup),
        ("dare_format", task.answer_format),
        ("dare_prompt", task.prompt),
        ("dare_extra_options", task.extra_options or ""),
        ("dare_split", task.split),
    ):
        dataset = dataset.add_column(column, [value] * count)
    return dataset


def _task_of(doc: dict[str, Any]) -> TaskSpec:
    name = doc.get("dare_task")
    if name not in TASKS_BY_NAME:
        raise ValueError(
            f"doc {doc.get('id')!r} has no DARE task identity (dare_task={name!r}); "
            "was it loaded through a DARE task's process_docs?"
        )
    return TASKS_BY_NAME[name]


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The question's image as RGB (the pack's one loader; errors name the question)."""
    return [image_of("dare", doc, "img", str(doc.get("id")))]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The paper's prompt for this task's setup, format and prompt number, then the question block."""
    task = _task_of(doc)
    return build_prompt(
        doc, task.setup, task.answer_format, task.prompt, task.extra_options or None, doc.get("dare_option")
    )


def doc_to_choice(doc: dict[str, Any]) -> list[str]:
    """Out-Log continuations: the letters A-D (single) or the 16 answer sets, NONE first (multi)."""
    return MULTI_CHOICES if _task_of(doc).setup == "multi" else SINGLE_CHOICES


def doc_to_target(doc: dict[str, Any]) -> str | int:
    """The gold answer as text ("B", "A, C", "NONE"); the host only inspects it once at start-up."""
    task = _task_of(doc)
    if task.answer_format == "log":
        return 0
    answer = doc.get("answer")
    if not answer:
        return "NONE" if task.setup == "multi" and task.scored else ""
    try:
        letters = sorted(gold_letters(doc, doc.get("id", "?")))
    except RecordError:
        return ""
    return ", ".join(letters) if letters else "NONE"


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)", re.IGNORECASE)


def _loss_of(result: Any) -> float:
    """The loss of one loglikelihood result: a (loss, is_greedy) pair, a number, or the pair's string
    form (lmms-eval 0.7.3 stringifies these pairs unless the pack's evaluator fix is installed)."""
    if isinstance(result, (list, tuple)) and result:
        result = result[0]
    if isinstance(result, (int, float)) and not isinstance(result, bool):
        return float(result)
    match = _NUMBER.search(str(result))
    if match is None:
        raise ValueError(f"cannot read a loglikelihood from {result!r:.80}")
    return float(match.group())


def _chosen_by_loglikelihood(results: list[Any], choices: list[str]) -> tuple[str, list[float]]:
    """The Out-Log choice: the continuation with the lowest loss (the first element of a loglikelihood
    result, as the host's own multiple_choice scoring reads it with argmin)."""
    losses = [_loss_of(result) for result in results]
    if len(losses) != len(choices):
        raise ValueError(f"expected {len(choices)} loglikelihood results, got {len(losses)}")
    best = min(
        range(len(losses)),
        key=lambda index: (math.inf if math.isnan(losses[index]) else losses[index], index),
    )
    return choices[best], losses


def _answer_list(answer: Any) -> list[str]:
    """The dataset's answer as a list (a lone string is one answer, not a list of characters)."""
    if answer is None:
        return []
    if isinstance(answer, str):
        return [answer]
    return list(answer)


def make_record(doc: dict[str, Any], results: list[Any], task_name: str | None = None) -> dict[str, Any]:
    """The scoring record of one doc (the fields of docs/dare.md) plus parse diagnostics for the logs."""
    task = TASKS_BY_NAME[task_name] if task_name else _task_of(doc)
    record: dict[str, Any] = {
        "task": task.name,
        "split": task.split,
        "id": doc["id"],
        "instance_id": doc.get("instance_id"),
        "category": doc["category"],
        "setup": task.setup,
        "answer": _answer_list(doc.get("answer")),
        **{letter: doc[letter] for letter in LETTERS},
        "format": task.answer_format,
        "prompt": task.prompt,
    }
    if task.extra_options:
        record["extra_options"] = task.extra_options
    if task.answer_format == "binary":
        record["option"] = doc["dare_option"]
    if task.answer_format == "log":
        record["prediction"], record["losses"] = _chosen_by_loglikelihood(results, doc_to_choice(doc))
    else:
        output = results[0] if results else ""
        # The host passes strings; tolerate a result object carrying .text.
        record["prediction"] = (
            output if isinstance(output, str) or output is None else getattr(output, "text", str(output))
        )
    # One parse path (parse_record, inside score_record too): an output parses the same on every split.
    verdict = score_record(record, record["id"]) if task.scored else None
    parsed = verdict.parsed if verdict is not None else parse_record(record, record["id"])
    record["parsed"] = parsed.text
    record["parse_status"] = parsed.status
    record["parse_rule"] = parsed.rule
    if verdict is not None:
        record["correct"] = bool(verdict.correct)
    return record


def grid_warnings(records: list[dict[str, Any]]) -> list[str]:
    """What a partial grid does to the cross-cell numbers: single-correct run on fewer than the paper's three
    prompts, and one setup's cells (format x prompt x variant) covering different questions."""
    warnings: list[str] = []
    single = [record for record in records if record.get("setup") == "single"]
    prompts = sorted({str(record.get("prompt")).lstrip("p") for record in single})
    if prompts and len(prompts) < len(PROMPTS):
        shown = ", ".join(f"p{prompt}" for prompt in prompts)
        warnings.append(
            f"single_accuracy averages prompt {shown} only, not the paper's {len(PROMPTS)} prompts "
            "(its std over prompts needs them all): run the DARE group (every prompt task) for the paper's "
            "number"
        )
    cells: dict[str, dict[tuple, set[str]]] = {}
    for record in records:
        cell = (record.get("format"), record.get("prompt"), record.get("extra_options"))
        cells.setdefault(str(record.get("setup")), {}).setdefault(cell, set()).add(str(record.get("id")))
    for setup, by_cell in sorted(cells.items()):
        every = set().union(*by_cell.values())
        missing = {question for ids in by_cell.values() for question in every - ids}
        if len(by_cell) > 1 and missing:
            warnings.append(
                f"{len(missing)} of {len(every)} {setup} questions are missing from some of its "
                f"{len(by_cell)} cells (format x prompt): the numbers across cells (std over prompts, format "
                "range, worst case) compare different questions (a --limit on binary tasks, or a member task "
                "that failed?)"
            )
    return warnings


def report_details(records: list[dict[str, Any]], metrics: dict[str, Any], name: str, args: Any) -> dict:
    """A partial grid's warnings (``grid_warnings``); a group's run logs its robustness summary table."""
    table = summary_table(metrics)
    if table and name not in TASKS_BY_NAME:
        logger.info(f"DARE robustness summary for {name}:\n{format_table(table)}")
    warnings = grid_warnings(records)
    return {"warnings": warnings} if warnings else {}


def result_keys(name: str) -> tuple[str, ...]:
    """The metric keys a task lists in its YAML (its headline numbers, at most eight)."""
    return tuple(TASKS_BY_NAME[name].result_keys())


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A uniformly random answer in the task's answer space (a letter, one of the 16 answer sets plus the
    extra options, or yes/no), written in the task's output format (the random baseline)."""
    task = TASKS_BY_NAME.get(doc.get("dare_task") or task_name) or TASKS_BY_NAME.get(task_name)
    if task is None:
        raise KeyError(f"unknown DARE task {task_name!r}")
    if task.answer_format == "binary":
        return rng.choice(("yes", "no"))
    if task.setup == "multi":
        chosen = rng.choice(MULTI_CHOICES + list(EXTRA_OPTIONS.get(task.extra_options or "", {})))
        if task.answer_format == "json":
            return json.dumps({"answers": [] if chosen == "NONE" else chosen.split(", ")})
        return chosen
    letter = rng.choice(LETTERS)
    written = {
        "json": json.dumps({"answer": letter}),
        "csv": f"answer,{letter}",
        "word": RANDOM_WORDS[letter],
        "inv": ", ".join(other for other in LETTERS if other != letter),
    }
    return written.get(task.answer_format, letter)


HOOKS = TaskHooks(
    "dare",
    make_record,
    metric_keys=result_keys,
    prepare_docs=prepare_docs,
    report_details=report_details,
    known_metrics=frozenset(key for task in all_tasks() for key in task.metric_keys()),
)
process_results = HOOKS.process_results
