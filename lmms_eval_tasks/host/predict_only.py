"""`--predict_only` with the pack's tasks (patch ``predict_only_records``): each task's records are saved
unscored in its run folder, for ``lmms-eval-tasks score`` (the host's ``bypass`` skipped the pack's hooks)."""

from __future__ import annotations

from typing import Any

from loguru import logger

from lmms_eval_tasks.host.patch_kit import APPLIES, expect_parameters, replaces

PREDICT_ONLY_FLAGS = ("--predict_only", "-x")
PREDICT_ONLY_NOTE = "generated with --predict_only, not scored"


def pack_hooks_of(task: Any) -> Any:
    """The pack's ``TaskHooks`` behind a host task's ``process_results`` (pack or user task), else None."""
    from lmms_eval_tasks.framework.hook_factory import TaskHooks

    hooks = getattr(getattr(getattr(task, "config", None), "process_results", None), "__self__", None)
    return hooks if isinstance(hooks, TaskHooks) else None


def save_unscored(hooks: Any, items: list[Any], args: Any = None) -> None:
    """Save a task's records and pending marker in its run folder, unscored (``score`` completes them), and
    those of each requested group a normal run scores once all its member tasks' records are in."""
    from lmms_eval_tasks.framework.hook_factory import note_group_members, unwrap_records
    from lmms_eval_tasks.framework.run_state import current_run
    from lmms_eval_tasks.framework.task_pipeline import output_dir

    records = unwrap_records(items)
    if not records:
        return
    source = str(records[0].get("task") or hooks.task_of(records[0]))
    name = str(records[0].get("variant") or source)
    folder = output_dir(args)
    if folder is None:  # the host requires --output_path with --predict_only; the Python API may not
        logger.warning(f"{name}: --predict_only without an output path: its records are not saved")
        return
    _save(hooks, folder, name, source, None, records, args)
    state = current_run(args)
    state.add_records(name, records, args)  # the groups' records, as a normal run keeps them
    for group, members in _scored_groups(args).items():
        kept = state.records_of(members)
        if name in kept and len(kept) == len(members):  # the group's last member: save the group once
            union = [record for member_records in kept.values() for record in member_records]
            note_group_members(group, members, args)  # its provenance lists the datasets they read
            _save(hooks, folder, group, group, members, union, args)


def _scored_groups(args: Any) -> dict[str, list[str]]:
    """The groups in ``--tasks`` (and their subgroups) that a normal run scores over their member tasks'
    records (their YAML has an ``aggregate_metric_list``), each with those member tasks."""
    from lmms_eval_tasks import TASKS_DIR
    from lmms_eval_tasks.framework import task_index
    from lmms_eval_tasks.framework.hook_factory import include_paths

    def entry_of(name: str) -> tuple[Any, Any]:
        for folder in [TASKS_DIR, *include_paths(args)]:
            entry = task_index.task_entry(name, folder)
            if entry is not None:
                return entry, folder
        return None, None

    found: dict[str, list[str]] = {}
    pending = [name.strip() for name in str(getattr(args, "tasks", "") or "").split(",") if name.strip()]
    while pending:
        entry, folder = entry_of(pending.pop())
        if entry is None or entry.kind != "group" or entry.name in found:
            continue
        members = task_index.group_members(entry.name, folder) or []
        pending += members
        if task_index.task_config(entry, folder).get("aggregate_metric_list"):
            tasks = [member for member in members if getattr(entry_of(member)[0], "kind", None) == "task"]
            found[entry.name] = tasks
    return found


def _save(hooks: Any, folder: Any, name: str, source: str, members: Any, records: list, args: Any) -> None:
    """Write one task's (or group's) records and its pending marker, marked predict-only, with no judge."""
    from lmms_eval_tasks.framework.saved_records import SavedRecords, pending_path, save_pending
    from lmms_eval_tasks.reporting.schema import dumps_strict, strict_loads, write_atomically

    settings = dict(hooks.task_settings(source))
    path = save_pending(folder, hooks.benchmark, name, source, members, args, settings, records)
    marker = pending_path(folder, name)
    pending = strict_loads(marker.read_text(encoding="utf-8"))
    pending.pop("judge", None)  # nothing was judged: the judge is the one `score` finds
    write_atomically(marker, dumps_strict({**pending, "predict_only": True}, indent=2) + "\n")
    command = SavedRecords(hooks.benchmark, name, path).command()
    logger.info(f"{name}: {PREDICT_ONLY_NOTE}; its {len(records)} records: {path}; score them: `{command}`")


def probe() -> tuple[str, str]:
    from lmms_eval.api.task import Task

    expect_parameters(
        "lmms_eval.api.task.Task.override_metric", Task.override_metric, ["self", "metric_name"]
    )
    return APPLIES, "override_metric wrapped: a pack task under --predict_only saves its records unscored"


def install() -> None:
    from lmms_eval.api.task import Task

    @replaces(Task, "override_metric")
    def override_metric(original: Any, self: Any, metric_name: str) -> None:
        hooks = pack_hooks_of(self)  # read first: the override drops the task's process_results
        original(self, metric_name)
        if hooks is None or metric_name != "bypass":
            return
        bypass = self._aggregation_list[metric_name]

        def process_results(doc: dict[str, Any], results: list[Any]) -> dict[str, Any]:
            return {metric_name: next(iter(hooks.process_results(doc, results).values()))}

        def aggregate(items: list[Any], args: Any = None) -> Any:
            save_unscored(hooks, items, args)
            return bypass(items)

        self._config.process_results = process_results
        self._aggregation_list[metric_name] = aggregate
