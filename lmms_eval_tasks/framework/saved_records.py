"""Records saved before scoring, with pending markers: a failing judge loses no generation, and
``lmms-eval-tasks score <benchmark> <samples file>`` completes the run (``complete_pending``)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from loguru import logger

PENDING_SUFFIX = "_pending.json"  # next to <task>_samples.jsonl while the task's records await scoring


def pending_path(folder: Path, name: str) -> Path:
    """The pending marker of task ``name`` in run folder ``folder``."""
    return folder / f"{name}{PENDING_SUFFIX}"


class SavedRecords(NamedTuple):
    """A task whose scoring failed after its records were saved: what ``score`` re-judges, and why."""

    benchmark: str
    task: str
    path: Path
    error: str = ""  # the cause, "<ExceptionType>: <message>" (secrets scrubbed)
    step: str = "scoring"  # which step failed: "scoring" or "writing the report"

    def command(self) -> str:
        """The one command that scores the saved records and completes the run's report."""
        return f"lmms-eval-tasks score {self.benchmark} {shlex.quote(str(self.path))}"


# Filled when a task's scoring fails after its records were saved; the launcher's last lines name them.
SAVED_FOR_SCORING: list[SavedRecords] = []


SCORING_STEP = "scoring"  # the step of ``keep_for_scoring``: the scorer (or its judge) raised
WRITING_STEP = "writing the report"  # the step of ``keep_for_scoring``: scored, files not written


def keep_for_scoring(
    benchmark: str, name: str, records_path: Path, count: int, error: BaseException, step: str = SCORING_STEP
) -> None:
    """Record that task ``name``'s ``step`` failed after its records were saved, and say how to finish it
    (the reason, naming the step, also goes into the pending marker so ``report`` can say which failed)."""
    from lmms_eval_tasks.judges.redact import scrub

    cause = scrub(f"{type(error).__name__}: {str(error) or type(error).__name__}")
    saved = SavedRecords(benchmark, name, records_path, cause, step)
    SAVED_FOR_SCORING.append(saved)
    reason = f"{step} failed: {cause}"
    _note_failure(pending_path(records_path.parent, name), step, reason)
    logger.error(
        f"{name}: {reason}; its {count} records are saved in {records_path}: "
        f"once the cause is fixed, score them and complete the report with `{saved.command()}`"
    )


def note_interrupted(records_path: Path, name: str, step: str, error: BaseException) -> None:
    """Say in task ``name``'s pending marker that ``step`` was interrupted (SIGTERM, Ctrl-C), so ``report``
    tells it from a failure; nothing is kept for the launcher's last lines (the process is ending)."""
    cause = str(error) or type(error).__name__
    _note_failure(pending_path(records_path.parent, name), step, f"{step} interrupted ({cause})")


def _note_failure(marker: Path, step: str, reason: str) -> None:
    """Add the failed step and its reason to a pending marker (best effort: on a full disk it may fail)."""
    from lmms_eval_tasks.reporting.schema import dumps_strict, strict_loads, write_atomically

    try:
        pending = strict_loads(marker.read_text(encoding="utf-8"))
        if isinstance(pending, dict):
            pending.update(failed_step=step, failure=reason)
            write_atomically(marker, dumps_strict(pending, indent=2) + "\n")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        logger.warning(f"{marker}: could not note the failed step ({error}); `report` will not name it")


def is_saved(name: str) -> bool:
    """True when task ``name``'s scoring failed after its records were saved (the launcher fails the run)."""
    return any(saved.task == name for saved in SAVED_FOR_SCORING)


def saved_args(args: Any) -> dict[str, Any]:
    """The CLI arguments a report's provenance reads, JSON-able, model args redacted."""
    from lmms_eval_tasks.reporting.schema import model_args_text, redact_arguments, to_strict_json

    model_args = model_args_text(getattr(args, "model_args", None)) if args is not None else ""
    return {
        "model": getattr(args, "model", None) if args is not None else None,
        "model_args": redact_arguments(model_args) if model_args else None,
        "limit": to_strict_json(getattr(args, "limit", None)) if args is not None else None,
        "seed": to_strict_json(getattr(args, "seed", None)) if args is not None else None,
    }


def save_pending(
    folder: Path,
    benchmark: str,
    name: str,
    source: str,
    members: list[str] | None,
    args: Any,
    settings: Mapping[str, Any],
    records: Sequence[Mapping[str, Any]],
) -> Path:
    """Write ``<name>_samples.jsonl`` (the ``score`` records) and ``<name>_pending.json`` (what completing
    the report needs) before scoring, so a failing judge loses no generation; returns the records file."""
    from lmms_eval_tasks.reporting.schema import (
        SAMPLES_SUFFIX,
        SCHEMA_VERSION,
        dumps_strict,
        redact_command_line,
        strict_lines,
        write_atomically,
    )

    records_path = folder / f"{name}{SAMPLES_SUFFIX}"
    write_atomically(records_path, strict_lines(records))
    pending = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": benchmark,
        "task": name,
        "source": source,
        "members": members,
        "records": records_path.name,
        "settings": settings,
        "args": saved_args(args),
        "command_line": redact_command_line(sys.argv) if args is not None else None,
    }
    judge = judge_now(benchmark)
    if judge is not None:  # what `score` compares: completing with another judge is said, not silent
        pending["judge"] = judge
    pending["generated"] = _generated(pending_path(folder, name), name, args)
    write_atomically(pending_path(folder, name), dumps_strict(pending, indent=2) + "\n")
    return records_path


def _generated(marker: Path, name: str, args: Any) -> dict[str, Any]:
    """What only the generating run knows, for the report ``score`` completes later (elsewhere): the
    datasets read, the host patches, the run's argument deviations; a marker's own is kept (a retry)."""
    from lmms_eval_tasks.framework.run_deviations import argument_deviations
    from lmms_eval_tasks.reporting import patch_record
    from lmms_eval_tasks.reporting.schema import datasets_read_of, strict_loads

    try:
        kept = strict_loads(marker.read_text(encoding="utf-8")).get("generated")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        kept = None
    if isinstance(kept, dict) and kept.get("datasets"):
        return kept
    return {
        "datasets": datasets_read_of(name),
        "host_patches": patch_record.patches(),
        "argument_deviations": argument_deviations(args, name),
    }


def judge_now(benchmark: str) -> dict[str, Any] | None:
    """The judge (kind, model, repeats) this environment gives a judged benchmark, None if not judged."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    if get_benchmark(benchmark).paper_judge_model is None:
        return None
    from lmms_eval_tasks.judges.factory import judge_identity

    return judge_identity(benchmark)  # the benchmarks' judge task is their name (per-task env suffix)


def judge_changes(run: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{setting: {"run": ..., "now": ...}}`` for the judge kind, model and repeats that differ."""
    if not isinstance(run, Mapping) or not isinstance(now, Mapping):
        return {}  # a marker from before the pack recorded its judge, or a benchmark without one
    return {
        key: {"run": run.get(key), "now": now.get(key)}
        for key in ("kind", "model", "repeats")
        if run.get(key) != now.get(key)
    }


def pending_for(records_path: Path) -> dict[str, Any] | None:
    """The pending marker saved next to a records file by a run whose scoring failed, or None."""
    from lmms_eval_tasks.reporting.schema import SAMPLES_SUFFIX, strict_loads

    if not records_path.name.endswith(SAMPLES_SUFFIX):
        return None
    marker = pending_path(records_path.parent, records_path.name[: -len(SAMPLES_SUFFIX)])
    if not marker.is_file():
        return None
    try:
        pending = strict_loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{marker}: unreadable ({error}); delete it to score the records alone") from None
    if not isinstance(pending, dict) or pending.get("records") != records_path.name:
        raise ValueError(f"{marker}: not a pending marker of {records_path.name}; delete it")
    return pending
