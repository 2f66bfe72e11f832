"""Honest cuts: a ``--limit`` never scores part of a benchmark's scoring unit as if it were whole.

A benchmark's ``RowSchema.units`` names the rows its metrics need together: HallusionBench's figure set
(category, subcategory, set_id: every question pair, for qAcc, and every figure, for fAcc, lies inside one
set; the no-image members of VS sets come from the ``non_image`` split, appended at the end), DARE's binary
question (its four option documents). Under ``--limit N`` (a whole number, checked by the launcher) a task's
``process_docs`` orders the documents so each unit is contiguous (in the order units first appear) and keeps
the whole units that fit in N documents; the host then takes all of them. What was kept is recorded per
task (``cut_note``) and said in the report's deviations and in the host's table (``table_label``); so is a
task's size under any limit (``limit_and_size``): a limit not below it cut nothing, and the report says so.

VRB needs no rounding: its subset is drawn by image before the limit, so every level task evaluates the same
first N questions. DARE's cross-task grid (std over prompts, format range) is checked when a group is scored
(``tasks/dare/hooks.py``: cells over different questions or missing prompts are warned).
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_NOTES: dict[str, str] = {}  # task -> what its --limit kept (replaced each time its docs are prepared)
_SIZES: dict[str, tuple[int, int]] = {}  # task -> (its --limit, its documents before the limit)


def _run_limit() -> float | None:
    """The run's ``--limit`` as a number, or None (no limit, not a number, or not a host run)."""
    from lmms_eval_tasks.framework.run_state import current_run

    limit = getattr(current_run().args, "limit", None)
    if limit is None:
        return None
    try:
        return float(limit)
    except (TypeError, ValueError):
        return None


def limit_in_force() -> int | None:
    """The run's ``--limit`` as a whole number of documents, or None (no limit, -1, or not a host run)."""
    value = _run_limit()
    return int(value) if value is not None and value >= 1 else None


def refuse_few_shot(task: str) -> None:
    """A one-line ``RowError`` when the run asks for few-shot examples (``--num_fewshot N``, N > 0): the
    pack's tasks are zero-shot and define none (the host would end on ``'ConfigurableTask' object has no
    attribute 'sampler'``). The launcher refuses it first for the pack's own task names; this catches a
    robustness variant or a task of the user's own built on one."""
    from lmms_eval_tasks.framework.dataset_contract import RowError
    from lmms_eval_tasks.framework.run_state import current_run

    shots = getattr(current_run().args, "num_fewshot", None)
    try:
        asked = shots is not None and float(shots) > 0
    except (TypeError, ValueError):
        asked = False
    if asked:
        raise RowError(
            f"{task}: --num_fewshot {shots}: the pack's tasks are zero-shot, as their papers evaluate them, "
            "and define no few-shot examples; drop --num_fewshot"
        )


def refuse_a_fraction(schema: Any, task: str) -> None:
    """A one-line ``RowError`` when the run's ``--limit`` is a fraction (0 < limit < 1) and ``task`` has a
    scoring unit: lmms-eval applies the fraction to the documents ``process_docs`` returns, so no rounding
    here can keep its units whole. The launcher refuses it first for the pack's own task names; this
    catches the rest (a robustness variant or a task of the user's own ``--include_path`` built on one)."""
    from lmms_eval_tasks.framework.dataset_contract import RowError

    value = _run_limit()
    unit = schema.unit_for(task) if schema is not None else None
    if unit is not None and value is not None and 0 < value < 1:
        raise RowError(
            f"{task}: --limit {value:g}: a fraction of the documents would split its {unit.name}s "
            f"({unit.why or 'its metrics need them together'}; lmms-eval applies it after the pack's "
            "rounding to whole units); give a whole number of documents"
        )


def whole_units(schema: Any, dataset: Any, task: str, limit: int | None) -> Any:
    """``dataset`` rounded down to the whole scoring units that fit in ``limit`` documents (units made
    contiguous first); unchanged without a limit, a unit, or when everything fits. A first unit larger than
    the limit is refused in one line (``RowError``) naming the smallest limit that keeps it whole."""
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
    """A task's final docs: the dataset contract (``dataset_contract.checked_rows``), few-shot requests and
    fractional limits on tasks with units refused, then a ``--limit`` rounded down to whole scoring units
    (a cut never leaves half a question pair in the metrics)."""
    from lmms_eval_tasks.framework.dataset_contract import checked_rows
    from lmms_eval_tasks.framework.registry import get_benchmark

    dataset = checked_rows(benchmark, dataset, task)
    schema = get_benchmark(benchmark).row_schema
    refuse_few_shot(task)
    refuse_a_fraction(schema, task)
    return whole_units(schema, dataset, task, limit_in_force())


def same_cut(source: str, task: str) -> None:
    """Record for ``task`` what ``--limit`` kept of ``source``, whose docs it reads (a robustness variant
    runs its source task's ``process_docs``): its report and its row in the host's table say the cut too."""
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


__all__ = [
    "cut_note",
    "limit_and_size",
    "limit_in_force",
    "prepared_rows",
    "refuse_a_fraction",
    "refuse_few_shot",
    "same_cut",
    "table_label",
    "whole_units",
]
