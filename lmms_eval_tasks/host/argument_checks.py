"""Run arguments the pack's tasks cannot honour, refused in one line before the host starts.

- ``--limit 0`` (the host ends on "did not find any docs!"), a negative limit other than the host's ``-1``
  (= no limit, recorded as a full run) and a fractional limit on a pack task (lmms-eval 0.7.3 applies a
  fraction to the documents a task's ``process_docs`` returned, after the pack rounded a cut to whole
  scoring units, so the cut would be cut again): one line naming the value and what to give instead.
- ``--offset N`` (N > 0) on a pack task: the host skips the first N documents of what the task's
  ``process_docs`` returned, which splits the scoring unit it starts in (a HallusionBench question pair, a
  DARE question) and leaves the report saying nothing of the skipped documents.
- a limit that is not a finite number (``nan``, ``inf``: the host ends on ``int(nan)``).
- ``--num_fewshot N`` (N > 0) on a pack task: the papers evaluate zero-shot and the tasks define no
  few-shot examples (the host ends on ``AttributeError: 'ConfigurableTask' object has no attribute
  'sampler'``).

A ``--tasks`` entry names the pack's tasks as the host expands it: a name, or an ``fnmatch`` pattern
(``hallusionbench*``) matching one of the pack's task, group or tag names.

Generation settings (``--gen_kwargs``) are not refused: they are recorded under the report's deviations
with their values and the task's own (``framework/run_deviations.py``).
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import Any

from lmms_eval_tasks import TASKS_DIR


def _pack_names() -> set[str]:
    """Task, group and tag names the pack defines (from its precomputed host index; cheap)."""
    try:
        entries = json.loads((TASKS_DIR / "host_index.json").read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError):
        from lmms_eval_tasks.framework.task_index import pack_names

        return pack_names()
    return set(entries)


def _runs(arguments: Sequence[str]) -> list[dict[str, Any]]:
    """The ``limit``, ``offset``, ``num_fewshot`` and ``tasks`` of each run: the command line's, over each
    entry of a ``--config`` YAML file (a value given on the command line wins, as in the host)."""
    parser = argparse.ArgumentParser(add_help=False)
    for flag in ("--limit", "--offset", "--num_fewshot", "--tasks", "--config"):
        parser.add_argument(flag, default=None)
    try:
        known, _ = parser.parse_known_args(list(arguments))
    except SystemExit:  # a flag without its value: the host reports it
        return []
    given = {key: value for key, value in vars(known).items() if value is not None and key != "config"}
    entries: list[Any] = [{}]
    if known.config:
        try:
            import yaml

            with open(known.config, encoding="utf-8") as handle:
                loaded = yaml.safe_load(handle)
            entries = loaded if isinstance(loaded, list) else [loaded]
        except (OSError, ValueError):
            entries = [{}]  # the host reports unreadable configs itself
    return [{**(entry if isinstance(entry, dict) else {}), **given} for entry in entries]


def _pack_tasks(tasks: Any, names: set[str]) -> list[str]:
    """The entries of ``--tasks`` that name pack tasks, groups or tags, a wildcard pattern included: the
    host matches each entry with ``fnmatch`` (``--tasks "hallusionbench*"`` runs the pack's HallusionBench
    tasks)."""
    import fnmatch

    listed = tasks if isinstance(tasks, list) else str(tasks or "").split(",")
    entries = [str(name).strip() for name in listed if str(name).strip()]
    return [entry for entry in entries if entry in names or fnmatch.filter(names, entry)]


def _number(value: Any) -> float | None:
    """``value`` as a number (``"00"`` -> 0.0), or None when it is not one (the host reports that)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def run_argument_problem(arguments: Sequence[str]) -> str | None:
    """One line refusing a ``--limit``, ``--offset`` or ``--num_fewshot`` the run cannot honour, else None."""
    names: set[str] | None = None
    for run in _runs(arguments):
        limit = run.get("limit")
        if limit is not None:
            try:
                value = float(limit)
            except (TypeError, ValueError):
                return f"--limit {limit}: expected a number of documents per task; no evaluation was started"
            if not math.isfinite(value):
                return (
                    f"--limit {limit}: expected a whole number of documents per task (leave --limit out, "
                    "or give -1, for a full run); no evaluation was started"
                )
            if value == 0 or (value < 0 and value != -1):
                return (
                    f"--limit {limit}: expected a positive number of documents per task (leave --limit out, "
                    "or give -1, for a full run); no evaluation was started"
                )
            if 0 < value < 1 or (value > 1 and not value.is_integer()):
                names = _pack_names() if names is None else names
                pack = _pack_tasks(run.get("tasks"), names)
                if pack:
                    return (
                        f"--limit {limit}: a fraction is not supported on the pack's tasks "
                        f"({', '.join(pack)}): "
                        "lmms-eval 0.7.3 applies it after the pack rounded the cut to whole scoring units; "
                        "give a whole number of documents per task; no evaluation was started"
                    )
        offset = run.get("offset")
        if offset is not None and str(offset).strip() not in ("", "None") and _number(offset) != 0:
            names = _pack_names() if names is None else names
            pack = _pack_tasks(run.get("tasks"), names)
            if pack:
                return (
                    f"--offset {offset}: not supported on the pack's tasks ({', '.join(pack)}): the host "
                    "would skip documents inside a scoring unit (a question pair, a question's options) and "
                    "the report could not say which were skipped; use --limit N for a shorter run (it keeps "
                    "whole units); no evaluation was started"
                )
        shots = run.get("num_fewshot")
        if shots is not None and str(shots).strip() not in ("", "None") and _number(shots) != 0:
            names = _pack_names() if names is None else names
            pack = _pack_tasks(run.get("tasks"), names)
            if pack:
                return (
                    f"--num_fewshot {shots}: the pack's tasks ({', '.join(pack)}) are zero-shot, as their "
                    "papers "
                    "evaluate them, and define no few-shot examples; drop --num_fewshot; no evaluation was "
                    "started"
                )
    return None


__all__ = ["run_argument_problem"]
