"""Honest cuts: under ``--limit N`` the documents are ordered by ``RowSchema.units`` and only whole units
that fit are kept; the cut is recorded per task (``cut_note``, ``table_label``)."""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_NOTES: dict[str, str] = {}  # task -> what its --limit kept (replaced each time its docs are prepared)
_SIZES: dict[str, tuple[int, int]] = {}  # task -> (its --limit, its documents before the limit)


def _run_number(argument: str) -> float | None:
    """The run's ``--<argument>`` as a number, or None (not given, not a number, or not a host run)."""
    from lmms_eval_tasks.framework.run_state import current_run

    value = getattr(current_run().args, argument, None)
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def refuse_few_shot(task: str) -> None:
    """A one-line ``RowError`` for ``--num_fewshot N > 0`` on a task the launcher did not refuse it for (a
    variant, a user's task built on one): the tasks are zero-shot (the host would crash on ``sampler``)."""
    from lmms_eval_tasks.framework.dataset_contract import RowError

    shots = _run_number("num_fewshot")
    if shots is not None and shots > 0:
        raise RowError(
            f"{task}: --num_fewshot {shots:g}: the pack's tasks are zero-shot, as their papers evaluate "
            "them, and define no few-shot examples; drop --num_fewshot"
        )


def refuse_a_fraction(schema: Any, task: str) -> None:
    """A one-line ``RowError`` for a fractional ``--limit`` on a task with a scoring unit (the host applies
    the fraction after ``process_docs``, so no rounding here can keep units whole)."""
    from lmms_eval_tasks.framework.dataset_contract import RowError

    value = _run_number("limit")
    unit = schema.unit_for(task) if schema is not None else None
    if unit is not None and value is not None and 0 < value < 1:
        raise RowError(
            f"{task}: --limit {value:g}: a fraction of the documents would split its {unit.name}s "
            f"({unit.why or 'its metrics need them together'}; lmms-eval applies it after the pack's "
            "rounding to whole units); give a whole number of documents"
        )


def whole_units(schema: Any, dataset: Any, task: str, limit: int | None) -> Any:
    """``dataset`` rounded down to the whole scoring units that fit in ``limit`` documents; a first unit
    larger than the limit is refused (``RowError``) naming the smallest limit that keeps it whole."""
    from lmms_eval_tasks.framework.dataset_contract import RowError

    unit = schema.unit_for(task) if schema is not None else None
    with _lock:
        _NOTES.pop(task, None)
        _SIZES.pop(task, None)
        if limit is not None:
            _SIZES[task] = (limit, len(dataset))
    if unit is None or limit is None or limit >= len(dataset):
        return dataset
    columns = [dataset[name] for name in unit.key]
    keys = list(zip(*columns, strict=True)) if columns else []
    members: dict[tuple, list[int]] = {}
    for index, key in enumerate(keys):
        members.setdefault(key, []).append(index)
    kept: list[int] = []
    units = 0
    for rows in members.values():
        if len(kept) + len(rows) > limit:
            break
        kept.extend(rows)
        units += 1
    if not kept:
        first = next(iter(members.values()))
        raise RowError(
            f"{task}: --limit {limit} is smaller than its first {unit.name} ({len(first)} documents: "
            f"{unit.why or 'its metrics need them together'}); give --limit {len(first)} or more"
        )
    note = (
        f"--limit {limit}: rounded down to {len(kept)} documents, {units} of {len(members)} whole "
        f"{unit.name}s ({unit.why or 'its metrics need every member'})"
    )
    with _lock:
        _NOTES[task] = note
    from loguru import logger

    logger.warning(f"{task}: {note}")
    return dataset.select(kept)


def prepared_rows(benchmark: str, dataset: Any, task: str) -> Any:
    """A task's final docs: contract checked, few-shot and fractional limits refused, whole units kept."""
    from lmms_eval_tasks.framework.dataset_contract import checked_rows
    from lmms_eval_tasks.framework.registry import get_benchmark

    dataset = checked_rows(benchmark, dataset, task)
    schema = get_benchmark(benchmark).row_schema
    refuse_few_shot(task)
    refuse_a_fraction(schema, task)
    limit = _run_number("limit")  # a whole number of documents: none without a limit, or with -1
    return whole_units(schema, dataset, task, int(limit) if limit is not None and limit >= 1 else None)


def same_cut(source: str, task: str) -> None:
    """Record for ``task`` (a robustness variant) the cut of ``source``, whose docs it reads."""
    with _lock:
        for notes in (_NOTES, _SIZES):
            notes.pop(task, None)
            if source in notes:
                notes[task] = notes[source]


def cut_note(task: str) -> str | None:
    """What ``--limit`` kept of ``task`` in this process (None when it was not rounded)."""
    with _lock:
        return _NOTES.get(task)


def limit_and_size(task: str) -> tuple[int, int] | None:
    """(``--limit``, the task's documents before it) when its docs were prepared in this process under a
    limit, else None: a limit not below the task's size cut nothing."""
    with _lock:
        return _SIZES.get(task)


def table_label(task: str, label: str) -> str:
    """The host table's name of ``task``: ``label`` plus ``[--limit N: M docs, K whole <unit>s]`` when cut,
    and ``[N of M answers cut at max_new_tokens]`` when the server cut answers at the token limit."""
    from lmms_eval_tasks.framework.failed_generations import answers_cut

    note = cut_note(task)
    if note is not None:
        limit, _, rest = note.partition(": rounded down to ")
        label = f"{label} [{limit}: {rest.split(' (')[0]}]"
    cut = answers_cut(task)
    return label if cut is None else f"{label} [{cut[0]} of {cut[1]} answers cut at max_new_tokens]"
