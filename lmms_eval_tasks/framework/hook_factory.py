"""The one hook factory: each ``hooks.py`` builds its YAML functions here; every metric key gets the same
record, and ``RunState.once`` runs the task pipeline once per task for all the host's aggregation calls."""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework.failed_generations import (
    CUT_KEY,
    FAILED_KEY,
    failure_in_results,
    has_failures,
    is_cut,
    note_cut,
    note_failures,
)
from lmms_eval_tasks.framework.run_state import current_run
from lmms_eval_tasks.framework.saved_records import is_saved
from lmms_eval_tasks.framework.task_pipeline import score_and_report

TASK_COLUMN = "pack_task"  # the column process_docs adds: every hook reads its task from the document
# Set by robustness variants: the name their records and report go under (settings: the source task's)
VARIANT_COLUMN = "pack_variant"
# Set on a process_docs error: the same rows fail every attempt, so the host's download retries re-raise it
# at once (5 attempts, 2 s apart otherwise; host/patches.py).
NOT_TRANSIENT = "lmms_eval_tasks_not_transient"
Maker = tuple[Callable[..., Callable[..., Any]], tuple[str, ...]]  # a hook factory and its arguments


class RecordRef(Mapping):
    """A sample's record under a secondary metric key, logged as a short pointer (the host's samples file
    would otherwise hold a full copy per key; DARE has 10-20 keys); aggregations read it as the record."""

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


def _as_number(value: Any) -> float | int:
    """A metric value the host can print: bools as ints, numbers as they are, anything else NaN."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    return math.nan


def include_paths(args: Any) -> list[Path]:
    """The user's ``--include_path`` folders from the host's CLI namespace (a string or a list)."""
    value = getattr(args, "include_path", None) if args is not None else None
    if not value:
        return []
    return [Path(path) for path in ([value] if isinstance(value, str) else value)]


def group_members(group: str, args: Any = None) -> list[str]:
    """The member tasks of a group, from its YAML in the pack or in the run's ``--include_path`` folders."""
    from lmms_eval_tasks.framework import task_index

    for folder in [TASKS_DIR, *include_paths(args)]:
        members = task_index.group_members(group, folder)
        if members is not None:
            return members
    raise KeyError(f"{group!r} is neither a pack group nor a group under the run's --include_path")


def note_group_members(group: str, members: Sequence[str], args: Any = None) -> None:
    """Tell ``reporting.datasets_read`` ``group``'s and its subgroups' members (for the provenance)."""
    from lmms_eval_tasks.reporting import datasets_read

    datasets_read.record_group(group, members)
    for member in members:
        try:
            note_group_members(member, group_members(member, args), args)
        except KeyError:  # a task, not a group
            continue


class TaskHooks:
    """One benchmark's hooks: ``make_record(doc, results, task)``, ``report_details(records, metrics, task,
    args)`` (what only a run knows), ``extra_files(records, task)`` (to ``<report folder>/<task>/``)."""

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

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> TaskHooks:
        """The host deep-copies task configs (and the bound hooks in them): the hooks stay one object."""
        return self

    __copy__ = __deepcopy__

    def metric_keys(self, task: str) -> tuple[str, ...]:
        """The task's YAML metric keys: headline metrics (or the override) and the screening count."""
        from lmms_eval_tasks.framework.registry import get_benchmark

        benchmark = get_benchmark(self.benchmark)
        keys = self._metric_keys(task) if self._metric_keys is not None else benchmark.headline_metrics
        return benchmark.table_keys(tuple(keys))

    def process_docs_for(self, task: str) -> Callable[[Any], Any]:
        """``task``'s ``process_docs``: judge check, ``prepare_docs(dataset, task)``, the dataset contract,
        ``--limit`` rounded to whole units, the task column (a user's task: own name)."""
        from lmms_eval_tasks.framework.cuts import same_cut
        from lmms_eval_tasks.reporting import datasets_read

        def process_docs(dataset: Any) -> Any:
            try:
                docs = self._prepared_docs(dataset, task)
                config = getattr(datasets_read.loading_task(), "config", None)
                if getattr(config, "process_docs", None) is not process_docs or config.task == task:
                    return docs
                # a user's task that includes this one's YAML under its own name reports as itself, as a
                # robustness variant does (it overwrote this task's records and report)
                same_cut(task, str(config.task))
                docs = docs.remove_columns([VARIANT_COLUMN]) if VARIANT_COLUMN in docs.column_names else docs
                return docs.add_column(VARIANT_COLUMN, [str(config.task)] * len(docs))
            except Exception as error:  # the pack's checks of rows and files: the same on every attempt
                setattr(error, NOT_TRANSIENT, True)
                raise

        process_docs.__name__ = process_docs.__qualname__ = f"process_docs_{task}"
        process_docs.__doc__ = f"Docs of {task}, each tagged with its task name in {TASK_COLUMN!r}."
        return process_docs

    def _prepared_docs(self, dataset: Any, task: str) -> Any:
        from lmms_eval_tasks.framework.cuts import prepared_rows
        from lmms_eval_tasks.framework.dataset_contract import checked_rows
        from lmms_eval_tasks.framework.judge_requirement import require_judge
        from lmms_eval_tasks.reporting import datasets_read

        require_judge(task)  # a judged task never falls back to the rule judge unasked
        loading = datasets_read.loading_task()
        datasets_read.record(task, datasets_read.describe(dataset, loading), replace=True)
        if self.prepare_docs is not None:  # the contract first: prepare_docs reads the rows too
            loaded = dataset
            dataset = self.prepare_docs(checked_rows(self.benchmark, dataset, task), task)
            files = getattr(dataset, "cache_files", None)
            if files and files != getattr(loaded, "cache_files", None):  # a prepared folder replaced it
                datasets_read.record(task, datasets_read.describe(dataset), replace=True)
        dataset = prepared_rows(self.benchmark, dataset, task)  # the contract; a --limit to whole units
        if TASK_COLUMN in dataset.column_names:
            dataset = dataset.remove_columns(TASK_COLUMN)
        return dataset.add_column(TASK_COLUMN, [task] * len(dataset))

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
        failure = failure_in_results(results)
        if failure is not None:  # a failed request is no answer: counted by the aggregation, never scored
            record: dict[str, Any] = {"task": task, FAILED_KEY: failure}
        else:
            record = self.make_record(doc, results, task)
            if is_cut(results):  # an answer all the same: scored, counted, warned about
                record[CUT_KEY] = True
        record.setdefault("task", task)
        if doc.get(VARIANT_COLUMN):
            record["variant"] = str(doc[VARIANT_COLUMN])
        return record_under_keys(record, self.metric_keys(task))

    def knows(self, metric: str) -> bool:
        """True for a key in ``known_metrics`` (any key without that list) or the screening count."""
        from lmms_eval_tasks.framework.screening import SCREENED_OUTPUTS

        return self.known_metrics is None or metric in self.known_metrics or metric == SCREENED_OUTPUTS

    def aggregator(self, metric: str) -> Callable[..., float | int]:
        """The aggregation of one metric key: all of a task's metrics come from one scoring of its records."""
        if not self.knows(metric):
            raise ValueError(f"{self.benchmark}: {metric!r} is no metric key of the benchmark")

        def aggregate(items: list[Any], args: Any = None) -> float | int:
            records = unwrap_records(items)
            if not records:
                raise ValueError(f"{self.benchmark}: aggregation of {metric!r} received no records")
            source = str(records[0].get("task") or self.task_of(records[0]))
            name = str(records[0].get("variant") or source)  # a robustness variant reports as itself
            if note_failures(name, records) is not None:  # the launcher names them and fails the run
                return math.nan
            note_cut(name, records)  # the launcher warns; the report lists them as a deviation
            state = current_run(args)
            state.add_records(name, records, args)  # for the groups this task belongs to
            try:
                with state.once(name, records) as slot:  # the task pipeline, once for all its metrics
                    if slot.missing:
                        slot.result = score_and_report(self, records, name, args, source=source)
            except Exception:
                if is_saved(name):  # records kept: the host goes on (other tasks, its own files); NaN here
                    return math.nan
                raise
            return _as_number(slot.result[0].get(metric))

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

    def group_aggregator(self, group: str, metric: str) -> Callable[..., float | int]:
        """The aggregation of ``metric`` for ``group``: scoring over the union of its members' records in
        the run's state (the host's per-task numbers cannot give cross-task statistics: ignored)."""
        if not self.knows(metric):
            raise ValueError(
                f"{self.benchmark}: group {group!r}: {metric!r} is no metric key of the benchmark"
            )

        def aggregate(metrics: list[float], sizes: list[int], weight_by_size: Any = False) -> float | int:
            state = current_run()
            kept = self._group_records(group, metric, state)
            if kept is None:
                return math.nan
            try:
                with state.once(f"group:{group}", list(kept.values())) as slot:  # once for all its metrics
                    if slot.missing:
                        union = [record for records in kept.values() for record in records]
                        slot.result = score_and_report(self, union, group, state.args, members=list(kept))
            except Exception:
                if is_saved(group):
                    return math.nan
                raise
            state.set_group_metrics(group, slot.result[0])
            return _as_number(slot.result[0].get(metric))

        aggregate.__name__ = aggregate.__qualname__ = f"aggregate_{group}_{metric}"
        aggregate.__doc__ = f"{group}'s {metric!r}, from one scoring of all its member tasks' records."
        return aggregate

    def yaml_functions(self, module: str, file: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
        """``__getattr__``/``__dir__`` of a ``task_docs`` module: the functions its folder's YAML names, made
        once on first use (thread-safe); any other name raises AttributeError (a YAML typo fails at load)."""
        lock = threading.Lock()
        made: dict[str, Callable[..., Any]] = {}
        named: dict[str, Maker] = {}

        def names() -> dict[str, Maker]:
            if not named:  # read under the lock, once: the YAML under the module's folder
                named.update(self._named_in_yaml(f"{module}.", Path(file).parent))
            return named

        def function(name: str) -> Callable[..., Any]:
            if not name.startswith(("process_docs_", "aggregate_")):
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            with lock:
                if name not in made:
                    if name not in names():
                        raise AttributeError(f"module {module!r} has no {name!r}: no YAML beside it names it")
                    make, arguments = named[name]
                    made[name] = make(*arguments)
                return made[name]

        def listing() -> list[str]:
            with lock:
                return sorted({*vars(sys.modules[module]), *names()})

        return function, listing

    def _named_in_yaml(self, prefix: str, folder: Path) -> dict[str, Maker]:
        """``{name: (hook factory, arguments)}`` of each ``!function <prefix><name>`` under ``folder``."""
        from lmms_eval_tasks.framework import task_index

        found: dict[str, Maker] = {}

        def add(path: Any, make: Callable[..., Callable[..., Any]], *arguments: str) -> None:
            if not isinstance(path, str) or not path.startswith(prefix):
                return
            name = path.removeprefix(prefix)
            if found.setdefault(name, (make, arguments)) != (make, arguments):
                raise ValueError(f"{folder}: {name} names both {found[name][1]} and {arguments}")

        for entry in task_index.pack_tasks(folder):
            config = task_index.task_config(entry, folder)
            if entry.kind == "task":
                add(config.get("process_docs"), self.process_docs_for, entry.name)
                for item in config.get("metric_list") or []:
                    add(item.get("aggregation"), self.aggregator, str(item.get("metric")))
            else:
                for item in config.get("aggregate_metric_list") or []:
                    key = str(item.get("metric")).split(",")[0]
                    add(item.get("aggregation"), self.group_aggregator, entry.name, key)
        return found

    def _group_records(self, group: str, metric: str, state: Any) -> dict[str, list[dict[str, Any]]] | None:
        """The kept records of ``group``'s members, by member; None (logged) if one failed or none has any."""
        try:
            members = group_members(group, state.args)
        except KeyError as error:
            where = f"{self.benchmark}: aggregation of {group}'s {metric!r}"
            raise ValueError(f"{where}: {error.args[0]}") from None
        failed = has_failures(members)
        if failed:
            logger.warning(f"{group}: members {failed} have failed generations; {metric} is NaN")
            return None
        note_group_members(group, members, state.args)
        kept = state.records_of(members)
        if not kept:
            logger.warning(f"{group}: no member task records were registered; {metric} is NaN")
            return None
        missing = sorted(set(members) - set(kept))
        if missing:
            logger.warning(f"{group}: scoring without records of {missing}")
        return kept
