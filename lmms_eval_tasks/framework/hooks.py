"""Small helpers shared by the task hooks: score a task's records once, write the pack's own reports.

The host calls one aggregation function per metric, each with its own list of per-sample values. Our
hooks return the same record dict for every metric key, so all lists hold the same records; the run's
state (``host/run_state.py``, ``RunState.score_once``) computes the full metrics dict (judging included)
once per task and every aggregation reads its key.
"""

from __future__ import annotations

import math
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from loguru import logger

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.host.run_state import current_run


class RecordRef(Mapping):
    """A sample's record as seen under a secondary metric key: the same data, logged as a short pointer.

    Hooks return one record per sample under every metric key; the host's samples file would otherwise
    hold a full copy per key (DARE tasks have 10-20 keys). Aggregations read it like the record itself.
    """

    __slots__ = ("record", "primary_key")

    def __init__(self, record: dict[str, Any], primary_key: str) -> None:
        self.record = record
        self.primary_key = primary_key

    def __getitem__(self, key: str) -> Any:
        return self.record[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.record)

    def __len__(self) -> int:
        return len(self.record)

    def __str__(self) -> str:
        return f"see {self.primary_key!r}"

    def __repr__(self) -> str:
        return f"RecordRef({self.primary_key!r})"


def record_under_keys(record: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """``{keys[0]: record, other key: RecordRef(record)}``: what a hook's process_results returns."""
    primary = keys[0]
    return {key: record if key == primary else RecordRef(record, primary) for key in keys}


def unwrap_records(items: Sequence[Any]) -> list[dict[str, Any]]:
    """The records behind an aggregation's items (plain records or RecordRefs)."""
    return [item.record if isinstance(item, RecordRef) else item for item in items]


def output_dir(args: Any) -> Path | None:
    """This run's pack folder ``<output_path>/<model_name_sanitized>/lmms_eval_tasks/<run_id>`` (created),
    or None (Python API, or no output path given). See ``reporting.schema.run_dir`` and docs/reports.md."""
    from lmms_eval_tasks.reporting.schema import run_dir

    return run_dir(args)


def write_report(
    args: Any, task_name: str, report: dict[str, Any], samples: list[dict[str, Any]] | None = None
) -> Path | None:
    """Write a ``reporting.schema.build_report`` report as ``<run folder>/<task>_report.json`` (and the
    records as ``<task>_samples.jsonl``), strict JSON, atomically; return the report path (None without an
    output path).

    These files complement the host's results and samples files: they hold what the host cannot (judge
    verdicts per repeat, unjudged items, diagnostics) and survive multi-process gathering, which copies
    the per-sample dicts before our aggregation annotates them. Each run writes into its own folder.
    """
    from lmms_eval_tasks.reporting.schema import ReportError, validate_report, write_report_files

    validate_report(report)
    if report["task"] != task_name:
        raise ReportError(f"report.task: {report['task']!r} written as {task_name!r}")
    folder = output_dir(args)
    if folder is None:
        return None
    if report["provenance"]["run_id"] is None:
        report = {**report, "provenance": {**report["provenance"], "run_id": folder.name}}
    return write_report_files(folder, report, samples)


# ---------------------------------------------------------------------------------------------------------
# The one hook factory: every benchmark's hooks module builds its YAML-referenced functions from TaskHooks.
# ---------------------------------------------------------------------------------------------------------

TASK_COLUMN = "pack_task"  # the column process_docs adds: every hook reads its task from the document
# Set by `lmms-eval-tasks robustness` variants of a pack task: the variant's own name, under which its
# records are registered and its report written (the hooks keep reading the source task's settings).
VARIANT_COLUMN = "pack_variant"
# Keys of a scorer's details that go to the report's provenance block (see reporting.schema.build_report).
_PROVENANCE_DETAILS = ("judge", "corruption", "pack_seeds", "deviations", "warnings")
PENDING_SUFFIX = "_pending.json"  # next to <task>_samples.jsonl while the task's records await scoring
# What each count of a benchmark's ``count_keys`` is, and what it does to the headline numbers.
COUNT_MEANINGS: dict[str, tuple[str, str]] = {
    "unparsed": ("unparsed answers", "scored as wrong"),
    "simple_unparsed": ("unparsed answers to simple questions", "scored as wrong"),
    "complex_unparsed": ("unparsed answers to complex questions", "scored as wrong"),
    "unjudged": ("unjudged verdicts", "the judge gave none; left out of the judged metrics"),
    "unjudged_verdicts": ("unjudged verdicts", "the judge gave none; left out of the judged metrics"),
    "empty_predictions": ("empty predictions", "generation errors? scored as the model's answers"),
    "missing_predictions": ("missing (null) predictions", "generation errors? scored as wrong"),
    "no_verdict": ("judge replies without a verdict word", "see the report's details for how they scored"),
    "undiagnosed_verdicts": (
        "judged verdicts without an LH/VI diagnosis",
        "an input of the decision tree (pair reference verdict or consistency verdict) is unknown; left out "
        "of the LH/VI/Mixed shares",
    ),
    "unjudged_consistency_needed": (
        "consistency verdicts the diagnosis needed but the judge did not give",
        "those answers are left out of the LH/VI/Mixed shares",
    ),
}


def _count_value(key: str, metrics: Mapping[str, Any], details: Mapping[str, Any]) -> int | None:
    """``key``'s count from the metrics, else the details, else ``details["counts"]`` (None if absent)."""
    counts = details.get("counts") if isinstance(details.get("counts"), Mapping) else {}
    for source in (metrics, details, counts):
        value = source.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, float) and not value.is_integer():
            continue
        return int(value)
    return None


def count_warnings(
    count_keys: Sequence[str],
    metrics: Mapping[str, Any],
    details: Mapping[str, Any],
    records: int,
    given: Sequence[str] = (),
) -> list[str]:
    """The shared rule: one warning per declared count that is not zero, ``"N <what> (of <records> records,
    count '<key>'): <consequence>"``, unless a scorer's own warning in ``given`` already starts with
    ``"N <what>"`` (and says more). Verdict counts may exceed the records when judged in repeats."""
    warnings: list[str] = []
    for key in dict.fromkeys(count_keys):
        value = _count_value(key, metrics, details)
        if not value:
            continue
        what, consequence = COUNT_MEANINGS.get(key, (key.replace("_", " "), "see the report's details"))
        if any(str(warning).startswith(f"{value} {what}") for warning in [*given, *warnings]):
            continue
        warnings.append(f"{value} {what} (of {records} records, count {key!r}): {consequence}")
    return warnings


def _pending_path(folder: Path, name: str) -> Path:
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


SCORING_STEP = "scoring"  # the step of ``_keep``: the scorer (or its judge) raised
WRITING_STEP = (
    "writing the report"  # the step of ``_keep``: scoring succeeded, its files could not be written
)


def _keep(
    benchmark: str, name: str, records_path: Path, count: int, error: BaseException, step: str = SCORING_STEP
) -> None:
    """Record that task ``name``'s ``step`` failed after its records were saved, and say how to finish it
    (the reason, naming the step, also goes into the pending marker so ``report`` can say which failed)."""
    from lmms_eval_tasks.judges.redact import scrub

    cause = scrub(f"{type(error).__name__}: {str(error) or type(error).__name__}")
    saved = SavedRecords(benchmark, name, records_path, cause, step)
    SAVED_FOR_SCORING.append(saved)
    reason = f"{step} failed: {cause}"
    _note_failure(_pending_path(records_path.parent, name), step, reason)
    logger.error(
        f"{name}: {reason}; its {count} records are saved in {records_path}: "
        f"once the cause is fixed, score them and complete the report with `{saved.command()}`"
    )


def _note_failure(marker: Path, step: str, reason: str) -> None:
    """Add the failed step and its reason to a pending marker (best effort: on a full disk it may fail)."""
    from lmms_eval_tasks.reporting.schema import _write_atomically, dumps_strict, strict_loads

    try:
        pending = strict_loads(marker.read_text(encoding="utf-8"))
        if isinstance(pending, dict):
            pending.update(failed_step=step, failure=reason)
            _write_atomically(marker, dumps_strict(pending, indent=2) + "\n")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        logger.warning(f"{marker}: could not note the failed step ({error}); `report` will not name it")


def write_bytes_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` whole or not at all; a failed write raises an OSError naming it."""
    from lmms_eval_tasks.reporting.schema import _write_error

    temporary = target.with_name(target.name + ".tmp")
    try:
        temporary.write_bytes(data)
        temporary.replace(target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _write_error(target, error) from None


def _saved(name: str) -> bool:
    """True when task ``name``'s scoring failed after its records were saved (the launcher fails the run)."""
    return any(saved.task == name for saved in SAVED_FOR_SCORING)


def _saved_args(args: Any) -> dict[str, Any]:
    """The CLI arguments a report's provenance reads, JSON-able, model args redacted."""
    from lmms_eval_tasks.reporting.schema import _model_args_text, redact_arguments, to_strict_json

    model_args = _model_args_text(getattr(args, "model_args", None)) if args is not None else ""
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
        _write_atomically,
        dumps_strict,
        redact_command_line,
    )

    records_path = folder / f"{name}{SAMPLES_SUFFIX}"
    _write_atomically(records_path, "".join(dumps_strict(record) + "\n" for record in records))
    pending = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": benchmark,
        "task": name,
        "source": source,
        "members": members,
        "records": records_path.name,
        "settings": settings,
        "args": _saved_args(args),
        "command_line": redact_command_line(sys.argv) if args is not None else None,
    }
    judge = _judge_now(benchmark)
    if judge is not None:  # what `score` compares: completing with another judge is said, not silent
        pending["judge"] = judge
    _write_atomically(_pending_path(folder, name), dumps_strict(pending, indent=2) + "\n")
    return records_path


def _judge_now(benchmark: str) -> dict[str, Any] | None:
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
    marker = _pending_path(records_path.parent, records_path.name[: -len(SAMPLES_SUFFIX)])
    if not marker.is_file():
        return None
    try:
        pending = strict_loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"{marker}: unreadable ({error}); delete it to score the records alone") from None
    if not isinstance(pending, dict) or pending.get("records") != records_path.name:
        raise ValueError(f"{marker}: not a pending marker of {records_path.name}; delete it")
    return pending


def benchmark_hooks(benchmark: str) -> TaskHooks:
    """The ``TaskHooks`` of a benchmark (``lmms_eval_tasks.tasks.<benchmark>.hooks.HOOKS``)."""
    import importlib

    module = importlib.import_module(f"lmms_eval_tasks.tasks.{benchmark}.hooks")
    hooks = getattr(module, "HOOKS", None)
    if not isinstance(hooks, TaskHooks):
        raise ValueError(f"{benchmark}: its hooks module defines no TaskHooks HOOKS")
    return hooks


def complete_pending(
    records_path: Path, records: list[dict[str, Any]], pending: Mapping[str, Any]
) -> tuple[dict[str, Any], Path]:
    """Score a failed run's saved records as the run would have, write its report into the run folder
    (removing the pending marker); returns (metrics, report path). Raises ValueError when this
    environment's task settings differ from the run's (the numbers would not be the run's)."""
    from types import SimpleNamespace

    hooks = benchmark_hooks(str(pending["benchmark"]))
    source, name = str(pending["source"]), str(pending["task"])
    settings = to_json_like(hooks.task_settings(source))
    saved = pending.get("settings") or {}
    differing = sorted(key for key in set(settings) | set(saved) if settings.get(key) != saved.get(key))
    if differing:
        key = differing[0]
        raise ValueError(
            f"{records_path}: setting {key!r} of {source} was {saved.get(key)!r} in the run, is "
            f"{settings.get(key)!r} here; set the run's environment (see the report's settings) and retry"
        )
    changed = judge_changes(pending.get("judge"), _judge_now(hooks.benchmark))
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
    metrics, report_path = hooks._score(
        records,
        name,
        args,
        members=pending.get("members"),
        source=source,
        folder=records_path.parent,
        command_line=pending.get("command_line"),
        scored_later=({"judge_changed": changed} if changed else None),
    )
    return metrics, report_path


def to_json_like(value: Any) -> Any:
    """``value`` as it reads back from strict JSON (tuples as lists), to compare saved settings."""
    from lmms_eval_tasks.reporting.schema import dumps_strict, strict_loads

    return strict_loads(dumps_strict(value))


def _as_number(value: Any) -> float | int:
    """A metric value the host can print: bools as ints, numbers as they are, anything else NaN."""
    import math

    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    return math.nan


def _include_paths(args: Any) -> list[Path]:
    """The user's ``--include_path`` folders from the host's CLI namespace (a string or a list)."""
    value = getattr(args, "include_path", None) if args is not None else None
    if not value:
        return []
    return [Path(path) for path in ([value] if isinstance(value, str) else value)]


def group_members(group: str, args: Any = None) -> list[str]:
    """The member tasks of a group, from its YAML in the pack or in the run's ``--include_path`` folders."""
    from lmms_eval_tasks.host.task_index import _load_yaml, pack_tasks

    for folder in [TASKS_DIR, *_include_paths(args)]:
        for entry in pack_tasks(folder):
            if entry.name == group and entry.kind == "group":
                members = _load_yaml((folder / entry.path).resolve()).get("task") or []
                return [member if isinstance(member, str) else member.get("task", "") for member in members]
    raise KeyError(f"{group!r} is neither a pack group nor a group under the run's --include_path")


class TaskHooks:
    """The hooks of one benchmark's tasks, built once in its ``hooks.py`` and named there explicitly.

    - ``process_docs_for(task)``: validates/expands the docs (``prepare_docs``) and adds the ``pack_task``
      column, so every later hook knows its task from the document alone.
    - ``process_results``: ``make_record(doc, results, task) -> record`` (a ``score`` record, JSON-able),
      returned under each of the task's metric keys (the full record once, references elsewhere).
    - ``aggregator(metric)``: scores the task's records once on the one scoring path (the registry's
      ``score_task`` with the options of its settings function, recorded in the report as
      ``provenance.settings.score_options``), writes the pack report, returns the metric.
    - ``report_details(records, metrics, task, args) -> dict``: what only a run knows (deviations, plots in
      the run folder), added to the scorer's details.
    - ``extra_files(records, task) -> {file name: content}``: leaderboard or submission files, written to
      ``<report folder>/<task>/<file name>`` after the report.
    - ``group_aggregator(group, metric)``: a cross-task group metric (one generated
      ``aggregate_<group>_<metric>`` line per group metric in the benchmark's ``task_docs.py``): the same
      scoring over the union of the member tasks' records, read from the run's state (docs/architecture.md).
    """

    def __init__(
        self,
        benchmark: str,
        make_record: Callable[[dict[str, Any], list[Any], str], dict[str, Any]],
        *,
        task_settings: Callable[[str], dict[str, Any]] | None = None,
        metric_keys: Callable[[str], Sequence[str]] | None = None,
        prepare_docs: Callable[[Any, str], Any] | None = None,
        report_details: Callable[[list[dict[str, Any]], dict[str, Any], str, Any], dict[str, Any]]
        | None = None,
        extra_files: Callable[[list[dict[str, Any]], str], dict[str, str | bytes]] | None = None,
        known_metrics: frozenset[str] | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.make_record = make_record
        self.task_settings = task_settings or (lambda task: {})
        self._metric_keys = metric_keys
        self.prepare_docs = prepare_docs
        self.report_details = report_details
        self.extra_files = extra_files
        self.known_metrics = known_metrics

    def __deepcopy__(self, memo: dict[int, Any]) -> TaskHooks:
        """The host deep-copies task configs (and the bound hooks in them): the hooks stay one object."""
        return self

    def __copy__(self) -> TaskHooks:
        return self

    # ---- docs and per-sample records ------------------------------------------------------------------

    def metric_keys(self, task: str) -> tuple[str, ...]:
        """The metric keys the task's YAML lists (the benchmark's headline metrics unless overridden)."""
        if self._metric_keys is not None:
            return tuple(self._metric_keys(task))
        from lmms_eval_tasks.framework.registry import get_benchmark

        return get_benchmark(self.benchmark).headline_metrics

    def process_docs_for(self, task: str) -> Callable[[Any], Any]:
        """The ``process_docs`` of ``task``: ``prepare_docs(dataset, task)``, then the task column."""

        def process_docs(dataset: Any) -> Any:
            from lmms_eval_tasks.framework import datasets_read
            from lmms_eval_tasks.host.patches import loading_task

            datasets_read.record(task, datasets_read.describe(dataset, loading_task()), replace=True)
            if self.prepare_docs is not None:
                loaded = dataset
                dataset = self.prepare_docs(dataset, task)
                files = getattr(dataset, "cache_files", None)
                if files and files != getattr(loaded, "cache_files", None):  # a prepared folder replaced it
                    datasets_read.record(task, datasets_read.describe(dataset), replace=True)
            if TASK_COLUMN in dataset.column_names:
                dataset = dataset.remove_columns(TASK_COLUMN)
            return dataset.add_column(TASK_COLUMN, [task] * len(dataset))

        process_docs.__name__ = process_docs.__qualname__ = f"process_docs_{task}"
        process_docs.__doc__ = f"Docs of {task}, each tagged with its task name in {TASK_COLUMN!r}."
        return process_docs

    @staticmethod
    def task_of(doc: dict[str, Any]) -> str:
        """The task a document was loaded for (set by ``process_docs_for``)."""
        task = doc.get(TASK_COLUMN)
        if not task:
            raise ValueError(
                f"document has no {TASK_COLUMN!r} field: was it loaded through the task's process_docs? "
                f"(fields: {sorted(doc)[:12]})"
            )
        return str(task)

    def process_results(self, doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
        """One record per document under every metric key of its task (no shared state: thread-safe)."""
        task = self.task_of(doc)
        record = self.make_record(doc, results, task)
        record.setdefault("task", task)
        if doc.get(VARIANT_COLUMN):
            record["variant"] = str(doc[VARIANT_COLUMN])
        return record_under_keys(record, self.metric_keys(task))

    # ---- scoring ---------------------------------------------------------------------------------------

    def _score(
        self,
        records: list[dict[str, Any]],
        name: str,
        args: Any,
        members: list[str] | None = None,
        source: str | None = None,
        folder: Path | None = None,
        command_line: list[str] | None = None,
        scored_later: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, Any], Path | None]:
        """Score ``records`` as task ``source`` (default ``name``) and report them under ``name``; returns
        (metrics, report path). The records are saved first: a failing judge loses no generation."""
        from lmms_eval_tasks.framework.registry import get_benchmark
        from lmms_eval_tasks.framework.uncertainty import score_with_uncertainty
        from lmms_eval_tasks.reporting.schema import build_report, write_report_files

        source = source or name
        folder = folder if folder is not None else output_dir(args)
        records_path = None
        settings = dict(self.task_settings(source))
        if folder is not None:
            records_path = save_pending(
                folder, self.benchmark, name, source, members, args, settings, records
            )
        try:
            benchmark = get_benchmark(self.benchmark)
            benchmark.validate(records)  # the record contract, before the scorer runs
            options = benchmark.task_options(source)
            metrics, details = benchmark.score_with_details(records, **options)
            if self.report_details is not None:
                run_details = self.report_details(records, metrics, source, args)
                merged = {**details, **run_details}
                for key in ("deviations", "warnings"):  # the run's first, then the scorer's
                    if key in details and key in run_details:
                        merged[key] = [*run_details[key], *details[key]]
                details = merged
            settings["score_options"] = options  # recorded even when empty: `score --options-from`
            options = {**options, **settings.get("uncertainty_options", {})}
            metrics, uncertainty = score_with_uncertainty(self.benchmark, records, metrics, **options)
        except Exception as error:
            if records_path is not None:
                _keep(self.benchmark, name, records_path, len(records), error)
            raise

        details = dict(details)
        if uncertainty:
            details["uncertainty"] = uncertainty
        provenance_parts = {key: details.pop(key) for key in _PROVENANCE_DETAILS if key in details}
        if members is not None:
            details["members"] = members
        if source != name:
            details["variant_of"] = source
        details.setdefault("records", len(records))
        given = list(provenance_parts.get("warnings", []))
        count_keys = get_benchmark(self.benchmark).count_keys
        provenance_parts["warnings"] = list(
            dict.fromkeys([*given, *count_warnings(count_keys, metrics, details, len(records), given)])
        )
        report = build_report(
            benchmark=self.benchmark,
            task=name,
            metrics=metrics,
            args=args,
            details=details,
            settings=settings,
            **provenance_parts,
        )
        if command_line is not None:  # completed later by `score`: the run's own command line
            report["provenance"]["command_line"] = list(command_line)
            report["details"]["scored_later"] = {
                "by": "lmms-eval-tasks score",
                "timestamp": report["provenance"]["timestamp"],
                **(scored_later or {}),
            }
        path = None
        try:
            if folder is not None and self.extra_files is not None:
                # Leaderboard and submission files first: the report (and latest.json) then point at a
                # run whose files are all there. Each file is written atomically.
                for file_name, content in self.extra_files(records, source).items():
                    target = folder / name / file_name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    data = content.encode("utf-8") if isinstance(content, str) else content
                    write_bytes_atomically(target, data)
                    logger.info(f"{self.benchmark}: {file_name} for {name} written to {target}")
            if folder is not None:
                if report["provenance"]["run_id"] is None:
                    report["provenance"]["run_id"] = folder.name
                path = write_report_files(folder, report, records)
                _pending_path(folder, name).unlink(missing_ok=True)
                logger.info(f"{self.benchmark}: report for {name} written to {path}")
        except OSError as error:  # a full disk: the records saved before scoring are what `score` reads
            if records_path is not None:
                _keep(self.benchmark, name, records_path, len(records), error, WRITING_STEP)
            raise
        return metrics, path

    def aggregator(self, metric: str) -> Callable[..., float | int]:
        """The aggregation of one metric key: all of a task's metrics come from one scoring of its records."""
        if self.known_metrics is not None and metric not in self.known_metrics:
            raise ValueError(f"{self.benchmark}: {metric!r} is no metric key of the benchmark")

        def aggregate(items: list[Any], args: Any = None) -> float | int:
            records = unwrap_records(items)
            if not records:
                raise ValueError(f"{self.benchmark}: aggregation of {metric!r} received no records")
            source = str(records[0].get("task") or self.task_of(records[0]))
            name = str(records[0].get("variant") or source)  # a robustness variant reports as itself
            state = current_run(args)
            state.add_records(name, records, args)  # for the groups this task belongs to
            try:
                metrics, _ = state.score_once(
                    name, records, lambda batch: self._score(batch, name, args, source=source)
                )
            except Exception:
                if _saved(name):  # records kept: the host goes on (other tasks, its own files); NaN here
                    return math.nan
                raise
            return _as_number(metrics.get(metric))

        def stderr(items: list[Any]) -> float | str:
            """The metric's bootstrap standard error, from the same one scoring (N/A when there is none)."""
            records = unwrap_records(items)
            name = str(records[0].get("variant") or records[0].get("task") or self.task_of(records[0]))
            scored = current_run().scored(name, records)  # the host calls it after the aggregation
            if scored is None:  # the task's scoring failed (its aggregation said so): no standard error
                return "N/A"
            metrics = scored[0] if isinstance(scored, tuple) else scored
            value = metrics.get(f"{metric}_stderr")
            return value if isinstance(value, int | float) and not isinstance(value, bool) else "N/A"

        aggregate.pack_stderr = stderr  # read by the host patch "pack_stderr" (host/patches.py)
        aggregate.__name__ = aggregate.__qualname__ = f"aggregate_{metric}"
        aggregate.__doc__ = f"The task's {metric!r}, from one scoring of all its records."
        return aggregate

    def aggregators(self, *metrics: str) -> tuple[Callable[..., float | int], ...]:
        """``aggregator(metric)`` for each name, in order.

        ``aggregate_accuracy, aggregate_unparsed = HOOKS.aggregators("accuracy", "unparsed")``
        """
        return tuple(self.aggregator(metric) for metric in metrics)

    def group_aggregator(self, group: str, metric: str) -> Callable[..., float | int]:
        """The aggregation of ``metric`` for ``group``: the benchmark's scoring over the union of the records
        its member tasks' aggregations kept in the run's state (``host/run_state.py``).

        The host passes the members' per-task numbers, which cannot give cross-task statistics (std over
        prompts, drops across severities); they are ignored. Generated as ``aggregate_<group>_<metric>``.
        """
        if self.known_metrics is not None and metric not in self.known_metrics:
            raise ValueError(
                f"{self.benchmark}: group {group!r}: {metric!r} is no metric key of the benchmark"
            )

        def aggregate(metrics: list[float], sizes: list[int], weight_by_size: Any = False) -> float | int:
            return self._aggregate_group(group, metric)

        aggregate.__name__ = aggregate.__qualname__ = f"aggregate_{group}_{metric}"
        aggregate.__doc__ = f"{group}'s {metric!r}, from one scoring of all its member tasks' records."
        return aggregate

    def _aggregate_group(self, group: str, metric: str) -> float | int:
        """``group_aggregator``'s work: members from the group YAML, their records from the run's state."""
        import math

        state = current_run()
        args = state.args
        try:
            members = group_members(group, args)
        except KeyError as error:
            where = f"{self.benchmark}: aggregation of {group}'s {metric!r}"
            raise ValueError(f"{where}: {error.args[0]}") from None
        kept = state.records_of(members)
        if not kept:
            logger.warning(f"{group}: no member task records were registered; {metric} is NaN")
            return math.nan
        present = list(kept)
        missing = sorted(set(members) - set(present))
        if missing:
            logger.warning(f"{group}: scoring without records of {missing}")
        record_lists = list(kept.values())
        union = [record for records in record_lists for record in records]
        try:
            group_metrics, _ = state.score_once(
                f"group:{group}", record_lists, lambda _: self._score(union, group, args, members=present)
            )
        except Exception:
            if _saved(group):
                return math.nan
            raise
        state.set_group_metrics(group, group_metrics)
        return _as_number(group_metrics.get(metric))
