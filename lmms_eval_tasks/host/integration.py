"""What the pack needs from its host, as host patches (``patches.py``): its tasks in every task index,
``process_docs`` reading the task's other splits, its numbers in the host's results, the run's context."""

from __future__ import annotations

import contextlib
import os
import tempfile
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework.task_index import load_host_index
from lmms_eval_tasks.host.patch_kit import (
    APPLIES,
    bare,
    expect,
    expect_keywords,
    expect_lookups,
    expect_parameters,
    parameters,
    replaces,
    spying,
    unwrapped,
)

_PACK_TASKS_DIR = str(TASKS_DIR)


def with_pack_dir(include_path: str | Sequence[str] | None) -> list[str]:
    """The user's include path(s) with the pack's task folder and those of the benchmark packages installed
    next to it appended once."""
    from lmms_eval_tasks.framework.registry import installed_task_folders

    paths = [include_path] if isinstance(include_path, str) else list(include_path or [])
    for folder in [_PACK_TASKS_DIR, *installed_task_folders()]:
        if os.path.realpath(folder) not in {os.path.realpath(path) for path in paths}:
            paths.append(folder)
    return paths


def probe_task_index() -> tuple[str, str]:
    from lmms_eval.tasks import TaskManager

    expect_parameters(
        "TaskManager.initialize_tasks",
        TaskManager.initialize_tasks,
        ["self", "include_path", "include_defaults"],
    )
    indexer = getattr(TaskManager, "_get_task_and_group", None)
    expect_parameters("TaskManager._get_task_and_group", indexer, ["self", "task_dir"])
    # initialize_tasks indexes a folder into {name: entry} ...
    with tempfile.TemporaryDirectory(prefix="lmms_eval_tasks_probe_") as folder:
        Path(folder, "probe.yaml").write_text(
            "task: lmms_eval_tasks_probe\ndataset_path: json\n", encoding="utf-8"
        )
        manager = bare(TaskManager, logger=logger, verbosity="ERROR")
        index = unwrapped(TaskManager.initialize_tasks)(manager, include_path=folder, include_defaults=False)
    entry = index.get("lmms_eval_tasks_probe") if isinstance(index, dict) else None
    expect(
        isinstance(entry, dict) and entry.get("type") == "task",
        f"TaskManager.initialize_tasks indexed a one-task folder as {index!r}",
    )

    # ... and every TaskManager builds its index by calling it
    class Probe(TaskManager):
        def initialize_tasks(self, include_path: Any = None, include_defaults: bool = True) -> Any:
            return {"lmms_eval_tasks_probe": entry}

    expect(
        Probe(include_defaults=False).all_tasks == ["lmms_eval_tasks_probe"],
        "TaskManager() no longer builds its index with initialize_tasks",
    )
    return APPLIES, "TaskManager.initialize_tasks wrapped to index the pack's task folder last"


def install_task_index() -> None:
    from lmms_eval.tasks import TaskManager

    @replaces(TaskManager, "initialize_tasks")
    def initialize_tasks(
        original: Any, self: Any, include_path: Any = None, include_defaults: bool = True
    ) -> Any:
        include_path = with_pack_dir(include_path)
        self.include_path = include_path
        pack_entries = load_host_index()
        if pack_entries is None:
            return original(self, include_path=include_path, include_defaults=include_defaults)
        pack_dir = os.path.realpath(_PACK_TASKS_DIR)
        others = [path for path in include_path if os.path.realpath(path) != pack_dir]
        index = original(self, include_path=others or None, include_defaults=include_defaults)
        return {**pack_entries, **index}  # built-ins and the user's paths win on a name clash


STDERR_ATTRIBUTE = "pack_stderr"  # an aggregation carrying this: items -> its metric's standard error


def probe_pack_stderr() -> tuple[str, str]:
    import lmms_eval.evaluator_utils as evaluator_utils

    current = getattr(evaluator_utils, "stderr_for_metric", None)
    expect_parameters("lmms_eval.evaluator_utils.stderr_for_metric", current, ["metric", "bootstrap_iters"])

    # One tiny metric through TaskOutput.calculate_aggregate_metric: its standard error must come from the
    # module's stderr_for_metric (the name the patch replaces) and land under "<metric>_stderr,<filter>".
    def aggregate(items: list[float]) -> float:
        return sum(items) / len(items)

    def answer(original: Any, metric: Any = None, bootstrap_iters: int = 0) -> Any:
        return (lambda items: -1.0) if metric is aggregate else original(metric, bootstrap_iters)

    output = evaluator_utils.TaskOutput.__new__(evaluator_utils.TaskOutput)
    output.task = types.SimpleNamespace(aggregation=lambda: {"probe": aggregate}, args=None)
    output.sample_metrics, output.agg_metrics = {("probe", "none"): [1.0, 2.0, 3.0]}, {}
    with spying(evaluator_utils, "stderr_for_metric", answer):
        output.calculate_aggregate_metric(bootstrap_iters=10)
    found = output.agg_metrics
    expect(
        found.get("probe,none") == 2.0 and found.get("probe_stderr,none") == -1.0,
        "TaskOutput.calculate_aggregate_metric no longer fills <metric>_stderr,<filter> from "
        f"stderr_for_metric (a probe metric gave {found})",
    )
    return APPLIES, "stderr_for_metric wrapped: pack aggregations give their bootstrap standard error"


def install_pack_stderr() -> None:
    import lmms_eval.evaluator_utils as evaluator_utils

    @replaces(evaluator_utils, "stderr_for_metric")
    def stderr_for_metric(original: Any, metric: Any, bootstrap_iters: int) -> Any:
        provider = getattr(metric, STDERR_ATTRIBUTE, None)
        if provider is not None and isinstance(bootstrap_iters, int) and bootstrap_iters > 0:
            return provider
        return original(metric=metric, bootstrap_iters=bootstrap_iters)


def drop_undefined_group_metrics(results: dict[str, Any], groups: set[str]) -> list[tuple[str, str]]:
    """Remove from the host's task (not group) rows each group-only metric (``Benchmark.group_metrics``) that
    is not a finite number there, with its ``_stderr`` twins; returns the (task, metric) pairs removed."""
    import math

    from lmms_eval_tasks.framework.registry import benchmark_for_task

    removed: list[tuple[str, str]] = []
    for name, values in results.items():
        if name in groups or not isinstance(values, dict):
            continue
        benchmark = benchmark_for_task(str(name))
        for metric in getattr(benchmark, "group_metrics", ()) or ():
            keys = [key for key in values if isinstance(key, str) and key.partition(",")[0] == metric]
            for key in keys:
                value = values[key]
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                    continue
                filter_name = key.partition(",")[2]
                del values[key]
                # its standard errors too: _stderr (ours), _stderr_clt / _stderr_clustered (the host's)
                for twin in [k for k in values if isinstance(k, str) and k.startswith(f"{metric}_stderr")]:
                    if twin.partition(",")[2] == filter_name:
                        del values[twin]
                removed.append((str(name), metric))
    return removed


def pack_group_stderrs(results: dict[str, Any], groups: set[str]) -> None:
    """Set each pack group's ``<metric>_stderr,<filter>`` to the pack's bootstrap of the group, not the host's
    pooled member stderr, unless the host computed none (``--bootstrap_iters 0``: no numeric task stderr)."""
    from lmms_eval_tasks.framework.run_state import current_run

    if not any(
        isinstance(value, int | float) and not isinstance(value, bool)
        for name, values in results.items()
        if name not in groups and isinstance(values, dict)
        for key, value in values.items()
        if "_stderr" in str(key)
    ):
        return
    state = current_run()  # the evaluation whose groups the host is consolidating
    for name in groups:
        values = results.get(name)
        for key in list(values) if isinstance(values, dict) else []:
            metric, _, filter_name = str(key).partition(",")
            value = state.group_stderr(str(name), metric) if filter_name and "_stderr" not in metric else None
            if value is not None:
                values[f"{metric}_stderr,{filter_name}"] = value


def probe_group_only_metrics() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator
    import lmms_eval.evaluator_utils as evaluator_utils

    consolidate = getattr(evaluator, "consolidate_group_results", None)
    expect_parameters(
        "lmms_eval.evaluator.consolidate_group_results",
        consolidate,
        ["results", "versions", "task_dict", "task_root", "show_group_table", "task_aggregation_list"],
    )
    expect_lookups("lmms_eval.evaluator.evaluate", evaluator.evaluate, ["consolidate_group_results"])
    subtasks = getattr(evaluator_utils, "get_subtask_list", None)
    expect(callable(subtasks), "lmms_eval.evaluator_utils.get_subtask_list is gone")
    results = {"lmms_eval_tasks_probe": {"alias": "probe", "probe,none": 1.0}}
    output = unwrapped(consolidate)(results, {}, {})
    expect(
        isinstance(output, tuple) and output[0] is results and subtasks({}) == {},
        "consolidate_group_results no longer returns the results it was given first",
    )
    return APPLIES, (
        "consolidate_group_results wrapped: group-only metrics leave the member tasks' rows; a pack group's "
        "Stderr is the pack's bootstrap of the group"
    )


def install_group_only_metrics() -> None:
    import lmms_eval.evaluator as evaluator
    import lmms_eval.evaluator_utils as evaluator_utils

    @replaces(evaluator, "consolidate_group_results")
    def consolidate_group_results(
        original: Any, results: Any, versions: Any, task_dict: Any, *args: Any, **kwargs: Any
    ) -> Any:
        # the top-level call only (the host recurses through evaluator_utils): groups are computed first,
        # from member rows that still carry every key, then the members' undefined copies go
        output = original(results, versions, task_dict, *args, **kwargs)
        groups = {name for name, members in evaluator_utils.get_subtask_list(task_dict).items() if members}
        pack_group_stderrs(output[0], groups)
        removed = drop_undefined_group_metrics(output[0], groups)
        if removed:
            logger.debug(f"group-only metrics left out of {len({task for task, _ in removed})} task rows")
        return output


def table_view(result_dict: dict[str, Any]) -> dict[str, Any]:
    """A copy of the host's results for printing: a pack task's non-finite metric value becomes None (the
    host prints N/A; the reason is in the pack report), a cut task says so; the results JSON is unchanged."""
    import math

    from lmms_eval_tasks.framework.cuts import table_label
    from lmms_eval_tasks.framework.registry import benchmark_for_task

    configs = result_dict.get("configs") if isinstance(result_dict.get("configs"), dict) else {}

    def pack_row(name: str) -> bool:  # a pack task by name, or a user's task including one (its hooks)
        hooks = str((configs.get(name) or {}).get("process_results", "")) if configs else ""
        return benchmark_for_task(name) is not None or "lmms_eval_tasks." in hooks

    view = dict(result_dict)
    for column in ("results", "groups"):
        rows = result_dict.get(column)
        if not isinstance(rows, dict):
            continue
        view[column] = {
            name: {
                key: None if isinstance(value, float) and not math.isfinite(value) else value
                for key, value in values.items()
            }
            if isinstance(values, dict) and pack_row(str(name))
            else values
            for name, values in rows.items()
        }
    # each row named with its --limit cut and its answers cut at the token limit (framework.cuts.table_label)
    rows = view.get("results")
    if isinstance(rows, dict):
        view["results"] = {
            name: {**values, "alias": table_label(str(name), str(values.get("alias", name)))}
            if isinstance(values, dict) and table_label(str(name), "") != ""
            else values
            for name, values in rows.items()
        }
    return view


def probe_table_na() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main
    import lmms_eval.utils as host_utils

    current = getattr(host_utils, "make_table", None)
    expect_parameters("lmms_eval.utils.make_table", current, ["result_dict", "column", "sort_results"])
    expect(
        getattr(host_main, "make_table", None) is not None, "lmms_eval.__main__ no longer imports make_table"
    )
    row = {"alias": "lmms_eval_tasks_probe", "probe_metric,none": None, "probe_metric_stderr,none": "N/A"}
    table = unwrapped(host_utils.make_table)(
        {"results": {"lmms_eval_tasks_probe": row}, "versions": {}, "n-shot": {}, "higher_is_better": {}}
    )
    line = next((line for line in str(table).splitlines() if "probe_metric" in line), "")
    expect("N/A" in line, f"make_table no longer prints a None metric as N/A (it printed {line.strip()!r})")
    return APPLIES, "make_table wrapped: a pack metric's NaN prints as N/A"


def install_table_na() -> None:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator
    import lmms_eval.utils as host_utils

    original = host_utils.make_table

    @replaces(host_utils, "make_table")
    def make_table(
        original: Any, result_dict: Any, column: str = "results", sort_results: bool = False
    ) -> Any:
        return original(table_view(result_dict), column, sort_results)

    for module in (host_main, evaluator):  # the modules that imported the host's function by name
        if getattr(module, "make_table", None) is original:
            module.make_table = host_utils.make_table


def probe_run_context() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator

    current = getattr(evaluator, "simple_evaluate", None)
    expect(callable(current), "lmms_eval.evaluator.simple_evaluate is gone")
    missing = [name for name in ("cli_args", "datetime_str") if name not in parameters(current)]
    expect(not missing, f"lmms_eval.evaluator.simple_evaluate takes no {', '.join(missing)}")
    single, owner = host_main.cli_evaluate_single, "lmms_eval.__main__.cli_evaluate_single"
    expect_lookups(owner, single, ["evaluator", "simple_evaluate"])
    expect_keywords(owner, single, ["cli_args", "datetime_str"])
    return APPLIES, "simple_evaluate wrapped to open the run's state (CLI args, run id) for the pack's hooks"


def install_run_context() -> None:
    import lmms_eval.evaluator as evaluator

    from lmms_eval_tasks.framework.run_state import host_run

    @replaces(evaluator, "simple_evaluate")
    def simple_evaluate(original: Any, *args: Any, **kwargs: Any) -> Any:
        with host_run(kwargs.get("cli_args"), kwargs.get("datetime_str")):
            return original(*args, **kwargs)


@contextlib.contextmanager
def _quiet_datasets() -> Iterator[None]:
    """No ``datasets`` progress bars while a probe loads its one-line dataset."""
    import datasets

    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            datasets.enable_progress_bars()


def probe_task_dataset_context() -> tuple[str, str]:
    from lmms_eval.api.task import ConfigurableTask

    expect_parameters("ConfigurableTask.download", ConfigurableTask.download, ["self", "dataset_kwargs"])
    # a two-split local dataset through the host's download: process_docs runs while self.dataset holds both
    seen: list[Any] = []
    task = ConfigurableTask.__new__(ConfigurableTask)

    def process_docs(docs: Any) -> Any:
        seen.append(sorted(getattr(task, "dataset", None) or ()))
        return docs

    with tempfile.TemporaryDirectory(prefix="lmms_eval_tasks_probe_") as folder:
        files = {}
        for split in ("test", "other"):
            files[split] = str(Path(folder, f"{split}.jsonl"))
            Path(files[split]).write_text('{"probe": 1}\n', encoding="utf-8")
        task.DATASET_PATH, task.DATASET_NAME = "json", None
        task._config = types.SimpleNamespace(
            process_docs=process_docs,
            training_split=None,
            validation_split=None,
            test_split="test",
            fewshot_split=None,
            process_results_use_image=True,
        )
        with _quiet_datasets():
            unwrapped(ConfigurableTask.download)(
                task, {"data_files": files, "cache_dir": str(Path(folder, "cache"))}
            )
    expect(
        seen == [["other", "test"]],
        f"ConfigurableTask.download ran process_docs with self.dataset holding {seen}",
    )
    return APPLIES, "ConfigurableTask.download wrapped so process_docs can read the task's other splits"


def _retried_when_transient(download: Any) -> Any:
    """The host's download, its retries (tenacity: 5 attempts, 2 s apart, 8 s) skipped for what fails the same
    way each time: an error of the pack's process_docs, a dataset missing from an offline run's cache."""
    retry_with = getattr(download, "retry_with", None)
    if retry_with is None:  # not tenacity's wrapper (another host): its own behaviour
        return download
    from tenacity import retry_if_exception

    from lmms_eval_tasks.framework.hook_factory import NOT_TRANSIENT
    from lmms_eval_tasks.host.datasets_cache import NOT_CACHED_WORDS, offline

    def transient(error: BaseException) -> bool:
        text = f"{type(error).__name__}: {error}"
        missing_offline = offline() and any(word in text for word in NOT_CACHED_WORDS)  # no retry helps
        return not getattr(error, NOT_TRANSIENT, False) and not missing_offline

    return retry_with(retry=retry_if_exception(transient))


def install_task_dataset_context() -> None:
    from lmms_eval.api.task import ConfigurableTask

    from lmms_eval_tasks.framework.shared_mappings import share_file_mappings

    share_file_mappings()  # VRB's 71 levels: one mapping of each VQAv2 file, not 71 (RSS-based job limits)
    retried = _retried_when_transient(ConfigurableTask.download)

    @replaces(ConfigurableTask, "download")
    def download(original: Any, self: Any, dataset_kwargs: Any = None) -> Any:
        from lmms_eval_tasks.framework.registry import benchmark_for_task
        from lmms_eval_tasks.host.datasets_cache import full_cache_kwargs
        from lmms_eval_tasks.reporting import datasets_read

        with datasets_read.loading(self):  # read by process_docs (``datasets_read.loading_task``)
            if benchmark_for_task(str(getattr(self.config, "task", ""))) is not None:
                whole = full_cache_kwargs(self.DATASET_PATH, self.DATASET_NAME, dataset_kwargs)
                if whole is not None:  # the host's own cache of the whole dataset (VRB: VQAv2) serves it
                    self.pack_dataset_kwargs = dataset_kwargs = whole
            return retried(self, dataset_kwargs)


def probe_cut_replies() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator
    from lmms_eval.caching.response_cache import ResponseCache

    from lmms_eval_tasks.framework.failed_generations import CutReply

    for name in ("_extract_cacheable", "_lookup"):
        expect(callable(getattr(ResponseCache, name, None)), f"ResponseCache.{name} is gone")
    strip = getattr(evaluator, "strip_reasoning_tags", None)
    expect_parameters("evaluator.strip_reasoning_tags", strip, ["text", "tag_pairs"])
    stored = unwrapped(ResponseCache._extract_cacheable)(CutReply("cut"))
    expect(
        isinstance(stored, str), f"ResponseCache._extract_cacheable gives {type(stored).__name__} for a reply"
    )
    return APPLIES, "the host's reasoning-tag strip and response cache keep a reply's text alone: marked"


def install_cut_replies() -> None:
    """A ``CutReply`` stays one through the evaluator's reasoning-tag strip (which makes a new string), and
    the response cache stores it as ``{CUT_KEY: text}`` and reads it back as one."""
    import lmms_eval.evaluator as evaluator
    from lmms_eval.caching.response_cache import ResponseCache

    from lmms_eval_tasks.framework.failed_generations import CUT_KEY, CutReply

    @replaces(evaluator, "strip_reasoning_tags")
    def strip_reasoning_tags(strip: Any, text: str, tag_pairs: Any) -> str:
        stripped = strip(text, tag_pairs)
        return CutReply(stripped) if isinstance(text, CutReply) else stripped

    @replaces(ResponseCache, "_extract_cacheable")
    def _extract_cacheable(extract: Any, response: Any) -> Any:
        text = extract(response)
        return {CUT_KEY: str(text)} if isinstance(text, CutReply) else text

    @replaces(ResponseCache, "_lookup")
    def _lookup(lookup: Any, self: Any, cache_key: str) -> Any:
        cached = lookup(self, cache_key)
        if isinstance(cached, dict) and set(cached) == {CUT_KEY} and isinstance(cached[CUT_KEY], str):
            return CutReply(cached[CUT_KEY])
        return cached
