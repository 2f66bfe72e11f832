"""A task's complete records: save, validate, options, score, intervals, warnings, report
(``score_and_report``, once per task and group; docs/architecture.md, "The walk")."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework import saved_records
from lmms_eval_tasks.framework.count_warnings import with_count_warnings
from lmms_eval_tasks.framework.failed_generations import (
    CUT_KEY,
    FAILED_KEY,
    cut_deviation,
    failed_records,
)
from lmms_eval_tasks.framework.intervals import attach_intervals
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.framework.run_deviations import argument_deviations
from lmms_eval_tasks.framework.run_state import current_run
from lmms_eval_tasks.framework.superseded_runs import clear_superseded_pending
from lmms_eval_tasks.reporting import schema

# Keys of a scorer's details that go to the report's provenance block (see reporting.schema.build_report).
PROVENANCE_DETAILS = ("judge", "corruption", "pack_seeds", "deviations", "warnings")


def score_and_report(
    hooks: Any,
    records: list[dict[str, Any]],
    name: str,
    args: Any,
    *,
    source: str | None = None,
    members: list[str] | None = None,
    folder: Path | None = None,
    completing: Mapping[str, Any] | None = None,
    validated: bool = False,
) -> tuple[dict[str, Any], Path | None]:
    """Score ``records`` as task ``source`` (default ``name``), report under ``name``; (metrics, report path).
    Saved first: a later failure keeps them for ``score`` (``completing``: its marker) and re-raises."""
    source = source or name
    failed = failed_records(records)
    if failed:  # `score` on records of a run whose requests failed: no metric from failure text
        raise ValueError(
            f"{name}: {len(failed)} of {len(records)} records are failed generations "
            f"({failed[0][FAILED_KEY]}); rerun the evaluation to ask for them"
        )
    benchmark = get_benchmark(hooks.benchmark)
    folder = folder if folder is not None else output_dir(args)
    settings = dict(hooks.task_settings(source))
    records_path = None
    if folder is not None:  # 1. save
        records_path = saved_records.save_pending(
            folder, benchmark.name, name, source, members, args, settings, records
        )
    try:
        if not validated:
            benchmark.validate(records)  # 2. validate
        options = benchmark.task_options(source)  # 3. options, checked once
        checked = benchmark.check_options(**options)
        metrics, details = benchmark.loaded.score.checked(records, checked)  # 4. score: the scorer's body
        metrics, details = benchmark.screen(records, metrics, details, checked)
        details = with_run_details(details, hooks, records, metrics, source, args)
        settings["score_options"] = options  # recorded even when empty: `score --options-from`
        metrics, details = attach_intervals(  # 5. intervals
            benchmark.name, metrics, details, **settings.get("uncertainty_options", {})
        )
    except Exception as error:
        if records_path is not None:
            saved_records.keep_for_scoring(benchmark.name, name, records_path, len(records), error)
        raise
    except BaseException as error:  # SIGTERM, Ctrl-C: said in the marker, not taken for a failed scoring
        if records_path is not None:
            saved_records.note_interrupted(records_path, name, saved_records.SCORING_STEP, error)
        raise
    details, provenance = split_provenance(details, len(records), members, source, name)
    provenance["warnings"] = with_count_warnings(  # 6. warnings
        provenance["warnings"], benchmark.count_keys, metrics, details, len(records)
    )
    cut = sum(1 for record in records if record.get(CUT_KEY))
    generated = (completing or {}).get("generated") or {}  # a run's limit, sized where its data was
    run_deviations = generated.get("argument_deviations")
    run_deviations = argument_deviations(args, name) if run_deviations is None else run_deviations
    deviations = [*run_deviations, *provenance.get("deviations", [])]
    provenance["deviations"] = deviations + ([cut_deviation(cut, len(records))] if cut else [])
    report = schema.build_report(  # 7. report
        benchmark=benchmark.name,
        task=name,
        metrics=metrics,
        args=args,
        details=details,
        settings=settings,
        paper_judge_model=benchmark.paper_judge_model,
        **provenance,
    )
    if completing is not None and completing.get("command_line") is not None:
        mark_scored_later(report, completing)
    try:
        path = write_task_files(folder, hooks, report, records, name, source)
    except OSError as error:  # a full disk: the records saved before scoring are what `score` reads
        if records_path is not None:
            step = saved_records.WRITING_STEP
            saved_records.keep_for_scoring(benchmark.name, name, records_path, len(records), error, step)
        raise
    except BaseException as error:  # interrupted after scoring succeeded: `score` completes the report
        if records_path is not None:
            saved_records.note_interrupted(records_path, name, saved_records.WRITING_STEP, error)
        raise
    return metrics, path


def with_run_details(
    details: dict[str, Any],
    hooks: Any,
    records: list[dict[str, Any]],
    metrics: dict[str, Any],
    task: str,
    args: Any,
) -> dict[str, Any]:
    """The scorer's details plus ``hooks.report_details`` (only the run knows); lists joined."""
    if hooks.report_details is None:
        return details
    run_details = hooks.report_details(records, metrics, task, args)
    merged = {**details, **run_details}
    for key in ("deviations", "warnings"):
        if key in details and key in run_details:
            merged[key] = [*run_details[key], *details[key]]
    return merged


def split_provenance(
    details: dict[str, Any], count: int, members: list[str] | None, source: str, name: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the report's details, its provenance parts): the judge, corruption, seeds, deviations and warnings a
    scorer returns go to the provenance; the members of a group and the source of a variant to the details."""
    details = dict(details)
    provenance = {key: details.pop(key) for key in PROVENANCE_DETAILS if key in details}
    provenance["warnings"] = list(provenance.get("warnings", []))
    if members is not None:
        details["members"] = members
    if source != name:
        details["variant_of"] = source
    details.setdefault("records", count)
    return details, provenance


def mark_scored_later(report: dict[str, Any], pending: Mapping[str, Any]) -> None:
    """A report completed by ``score``: the run's own command line, and who scored it when."""
    report["provenance"]["command_line"] = list(pending["command_line"])
    generated = pending.get("generated") or {}
    for key in ("datasets", "host_patches"):  # where it was generated, not where it is scored
        if generated.get(key):
            report["provenance"][key] = generated[key]
    report["details"]["scored_later"] = {
        "by": "lmms-eval-tasks score",
        "timestamp": report["provenance"]["timestamp"],
        **(pending.get("scored_later") or {}),
    }


def write_task_files(
    folder: Path | None,
    hooks: Any,
    report: dict[str, Any],
    records: list[dict[str, Any]],
    name: str,
    source: str,
) -> Path | None:
    """Write the task's extra files (leaderboard) first, then its report and records (which then point at a
    complete run), and remove the pending marker; the report path (None without a run folder)."""
    if folder is None:
        return None
    if hooks.extra_files is not None:
        for file_name, content in hooks.extra_files(records, source).items():
            target = folder / name / file_name
            target.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            schema.write_bytes_atomically(target, data)
            logger.info(f"{hooks.benchmark}: {file_name} for {name} written to {target}")
    if report["provenance"]["run_id"] is None:
        report["provenance"]["run_id"] = folder.name
    path = schema.write_report_files(folder, report, records)
    saved_records.pending_path(folder, name).unlink(missing_ok=True)
    clear_superseded_pending(folder, name, report["provenance"])  # a killed run this one completed again
    logger.info(f"{hooks.benchmark}: report for {name} written to {path}")
    return path


def output_dir(args: Any) -> Path | None:
    """This run's pack folder (``reporting.schema.run_dir``, created), or None without an output path."""
    return schema.run_dir(args, current_run(args))


def write_report(
    args: Any, task_name: str, report: dict[str, Any], samples: list[dict[str, Any]] | None = None
) -> Path | None:
    """Write a report (and its records) into the run's pack folder, strict JSON, atomically; its path, None
    without an output path (these files survive multi-process gathering)."""
    schema.validate_report(report)
    if report["task"] != task_name:
        raise schema.ReportError(f"report.task: {report['task']!r} written as {task_name!r}")
    folder = output_dir(args)
    if folder is None:
        return None
    if report["provenance"]["run_id"] is None:
        report = {**report, "provenance": {**report["provenance"], "run_id": folder.name}}
    return schema.write_report_files(folder, report, samples)


def complete_pending(
    records_path: Path, records: list[dict[str, Any]], pending: Mapping[str, Any], validated: bool = False
) -> tuple[dict[str, Any], Path | None]:
    """Score a failed run's saved records as the run would have and write its report (``lmms-eval-tasks
    score``); ValueError when this environment's task settings differ from the run's."""
    from types import SimpleNamespace

    hooks = get_benchmark(str(pending["benchmark"])).loaded.hooks
    if hooks is None:
        raise ValueError(f"{pending['benchmark']}: its behaviour names no TaskHooks (Behaviour.hooks)")
    source, name = str(pending["source"]), str(pending["task"])
    settings = schema.strict_loads(schema.dumps_strict(hooks.task_settings(source)))  # as saved: tuples lists
    saved = pending.get("settings") or {}
    differing = sorted(key for key in set(settings) | set(saved) if settings.get(key) != saved.get(key))
    if differing:
        key = differing[0]
        raise ValueError(
            f"{records_path}: setting {key!r} of {source} was {saved.get(key)!r} in the run, is "
            f"{settings.get(key)!r} here; set the run's environment (see the report's settings) and retry"
        )
    changed = saved_records.judge_changes(pending.get("judge"), saved_records.judge_now(hooks.benchmark))
    if changed:
        said = ", ".join(
            f"{key} {value['run']!r} in the run, {value['now']!r} now" for key, value in changed.items()
        )
        print(
            f"lmms-eval-tasks score: {records_path}: the judge differs from the run's ({said}): completing "
            "the run's report with this judge; its details.scored_later.judge_changed records it",
            file=sys.stderr,
        )
    args = SimpleNamespace(output_path=None, **(pending.get("args") or {}))
    completing = {
        "command_line": pending.get("command_line"),
        "scored_later": {"judge_changed": changed} if changed else None,
        "generated": pending.get("generated"),
    }
    return score_and_report(
        hooks,
        records,
        name,
        args,
        source=source,
        members=pending.get("members"),
        folder=records_path.parent,
        completing=completing,
        validated=validated,
    )
