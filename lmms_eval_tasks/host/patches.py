"""Every change the pack makes to its host, lmms-eval, in one place, each gated by what the host does.

A ``HostPatch`` pairs an ``install`` with a ``probe`` that checks, without changing anything, that the host
still behaves as the patch expects: it calls the host function on a tiny input, inspects its signature, or
reads which names its compiled code looks up at call time (the names a wrapper must replace). No probe
reads source text, so a reformat upstream does not turn a patch off. For a host bug the probe also shows
that the bug is still there (``NOT_NEEDED`` once the host fixes it).

Any host version gets every patch whose probe passes; the version number gates nothing. When patches do
not apply, ``apply_patches`` says so in one warning line (each patch with its reason, and whether this host
version is one the patches were tested on, ``version.TESTED_HOST_VERSIONS``); ``lmms-eval-tasks doctor``
lists them with what a run loses, and every pack report records the patches of its run
(``provenance.host_patches``). Declaring a new patch: docs/models.md ("Host patches").

Import is cheap: lmms-eval, torch and transformers are imported only by the functions that need them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework.task_index import load_host_index
from lmms_eval_tasks.host import host_bug_fixes as fixes
from lmms_eval_tasks.host import predict_only, response_cache_fixes, version
from lmms_eval_tasks.host import task_index_cache as index_cache
from lmms_eval_tasks.host.patch_kit import (
    APPLIES,
    MISMATCH,
    NOT_NEEDED,
    expect_parameters,
    is_marked,
    mark,
    missing_keywords,
    missing_lookups,
    parameters,
    probe_lock,
    spying,
    unwrapped,
)
from lmms_eval_tasks.reporting import patch_record

_lock = probe_lock


# ---------------------------------------------------------------------------------------------------------
# Patches
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HostPatch:
    """One change to lmms-eval: what it does, how to check the host still fits it, and how to install it.

    ``probe()`` returns ``(APPLIES | NOT_NEEDED | MISMATCH, detail)`` from the host's behaviour, without
    changing anything; ``install()`` is idempotent. ``models`` lists the ``--model`` values that need the
    patch (empty: every run). ``without`` says what a run loses when the patch is skipped, and the way around.
    """

    name: str
    summary: str
    probe: Callable[[], tuple[str, str]]
    install: Callable[[], None]
    without: str
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class PatchStatus:
    """What happened (or would happen) to one patch on this host."""

    name: str
    state: str  # "applied", "applies", "not needed", "skipped"
    detail: str
    summary: str = ""
    without: str = ""

    @property
    def ok(self) -> bool:
        return self.state != "skipped"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


# --- 1. the pack's tasks in every host task index ---------------------------------------------------------

_PACK_TASKS_DIR = str(TASKS_DIR)


def with_pack_dir(include_path: str | Sequence[str] | None) -> list[str]:
    """The user's include path(s) with the pack's task folder appended once."""
    if include_path is None:
        paths: list[str] = []
    elif isinstance(include_path, str):
        paths = [include_path]
    else:
        paths = list(include_path)
    normalised = {os.path.realpath(path) for path in paths}
    if os.path.realpath(_PACK_TASKS_DIR) not in normalised:
        paths.append(_PACK_TASKS_DIR)
    return paths


def _probe_task_index() -> tuple[str, str]:
    from lmms_eval.tasks import TaskManager

    problem = expect_parameters(
        "TaskManager.initialize_tasks",
        TaskManager.initialize_tasks,
        ["self", "include_path", "include_defaults"],
    ) or expect_parameters(
        "TaskManager._get_task_and_group",
        getattr(TaskManager, "_get_task_and_group", None),
        ["self", "task_dir"],
    )
    if problem:
        return MISMATCH, problem
    # initialize_tasks indexes a folder into {name: entry} ...
    with tempfile.TemporaryDirectory(prefix="lmms_eval_tasks_probe_") as folder:
        Path(folder, "probe.yaml").write_text(
            "task: lmms_eval_tasks_probe\ndataset_path: json\n", encoding="utf-8"
        )
        manager = TaskManager.__new__(TaskManager)
        manager.logger, manager.verbosity = logger, "ERROR"
        index = unwrapped(TaskManager.initialize_tasks)(manager, include_path=folder, include_defaults=False)
    entry = index.get("lmms_eval_tasks_probe") if isinstance(index, dict) else None
    if not isinstance(entry, dict) or entry.get("type") != "task":
        return MISMATCH, f"TaskManager.initialize_tasks indexed a one-task folder as {index!r}"

    # ... and every TaskManager builds its index by calling it
    class Probe(TaskManager):
        def initialize_tasks(self, include_path: Any = None, include_defaults: bool = True) -> Any:
            return {"lmms_eval_tasks_probe": entry}

    if Probe(include_defaults=False).all_tasks != ["lmms_eval_tasks_probe"]:
        return MISMATCH, "TaskManager() no longer builds its index with initialize_tasks"
    return APPLIES, "TaskManager.initialize_tasks wrapped to index the pack's task folder last"


def _install_task_index() -> None:
    from lmms_eval.tasks import TaskManager

    original = TaskManager.initialize_tasks
    if is_marked(original):
        return

    def initialize_tasks(self: Any, include_path: Any = None, include_defaults: bool = True) -> Any:
        include_path = with_pack_dir(include_path)
        self.include_path = include_path
        pack_entries = load_host_index()
        if pack_entries is None:
            return original(self, include_path=include_path, include_defaults=include_defaults)
        pack_dir = os.path.realpath(_PACK_TASKS_DIR)
        others = [path for path in include_path if os.path.realpath(path) != pack_dir]
        index = original(self, include_path=others or None, include_defaults=include_defaults)
        return {**pack_entries, **index}  # built-ins and the user's paths win on a name clash

    initialize_tasks.__doc__ = original.__doc__
    TaskManager.initialize_tasks = mark(initialize_tasks, original)


# --- 1b. the host's task index parsed by libyaml ------------------------------------------------------------

# Every host start indexes its ~3,200 built-in task YAML files with PyYAML's pure-Python parser: about 10 s
# of CPU, most of a `--tasks list`. libyaml's parser (PyYAML's C extension, same constructors) gives the
# same index in about 1.5 s. Only the index's "simple" parse is moved (a `!function` tag stays a node there):
# a full parse resolves `!function` from `loader.name`, which libyaml's loader does not have.
_INDEXING = threading.local()  # set while this thread's TaskManager._get_task_and_group runs
_LIBYAML_MARK = "_lmms_eval_tasks_libyaml_index"


class _IndexYaml:
    """Stands in for the `yaml` module inside `lmms_eval.utils`: ``full_load`` parses with libyaml while this
    thread builds a task index, with the `!function` constructor the host registered for that parse, and
    tells a recording index build (``task_index_cache``) each file it parsed; every other use is PyYAML's
    own."""

    def __init__(self, yaml_module: types.ModuleType) -> None:
        self._yaml = yaml_module
        self._loader: Any = None
        if getattr(yaml_module, "__with_libyaml__", False) and hasattr(yaml_module, "CFullLoader"):

            class IndexLoader(yaml_module.CFullLoader):  # type: ignore[name-defined,misc]
                pass

            def function_tag(loader: Any, node: Any) -> Any:
                return yaml_module.FullLoader.yaml_constructors["!function"](loader, node)

            IndexLoader.add_constructor("!function", function_tag)
            self._loader = IndexLoader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._yaml, name)

    def full_load(self, stream: Any) -> Any:
        if getattr(_INDEXING, "active", False) and self._loader is not None:
            data = self._yaml.load(stream, Loader=self._loader)
        else:
            data = self._yaml.full_load(stream)
        build = index_cache.recording_build()
        if build is not None:
            build.read(stream, data)
        return data


def _host_index_of(folder: str, fast: bool) -> dict[str, Any]:
    """The host's own index of ``folder`` (its unwrapped indexer), parsed by libyaml when ``fast``."""
    from lmms_eval.tasks import TaskManager

    manager = TaskManager.__new__(TaskManager)
    manager.logger, manager.verbosity = logger, "ERROR"
    _INDEXING.active = fast
    try:
        return dict(unwrapped(TaskManager._get_task_and_group)(manager, folder))
    finally:
        _INDEXING.active = False


def _indexer_shape_problem() -> str | None:
    """What the two task-index patches need of the host's indexer, or why it is not there: the task folder
    walk ``TaskManager._get_task_and_group(self, task_dir)``, whose YAML goes through ``lmms_eval.utils``'s
    ``load_yaml_config`` (``yaml.full_load``) with the yaml module (or the libyaml patch's stand-in)."""
    import lmms_eval.utils as host_utils
    from lmms_eval.tasks import TaskManager

    indexer = getattr(TaskManager, "_get_task_and_group", None)
    loader = host_utils.load_yaml_config
    problem = expect_parameters("TaskManager._get_task_and_group", indexer, ["self", "task_dir"]) or (
        missing_lookups("lmms_eval.utils.load_yaml_config", loader, ["yaml", "full_load"])
    )
    if problem:
        return problem
    if not isinstance(host_utils.yaml, _IndexYaml | types.ModuleType):
        return f"lmms_eval.utils.yaml is {type(host_utils.yaml).__name__}, not the yaml module"
    return None


def _probe_libyaml_index() -> tuple[str, str]:
    import lmms_eval.utils as host_utils
    import yaml

    if not getattr(yaml, "__with_libyaml__", False) or not hasattr(yaml, "CFullLoader"):
        return MISMATCH, "PyYAML has no libyaml here (the index is parsed by pure Python, about 7x slower)"

    problem = _indexer_shape_problem()
    if problem:
        return MISMATCH, problem
    # the same index both ways on a folder with what the built-ins use: include, !function, a group, a tag
    with tempfile.TemporaryDirectory(prefix="lmms_eval_tasks_probe_") as folder:
        files = {
            "_template_yaml": "dataset_path: json\ndoc_to_text: !function utils.doc_to_text\n",
            "probe_a.yaml": "include: _template_yaml\ntask: lmms_eval_tasks_probe_a\ntag: probe_tag\n",
            "probe_b.yaml": "task: lmms_eval_tasks_probe_b\ndataset_path: json\n"
            "process_results: !function utils.process_results\nmetric_list:\n  - metric: acc\n",
            "probe_group.yaml": "group: lmms_eval_tasks_probe_group\ntask:\n  - lmms_eval_tasks_probe_a\n",
        }
        for name, text in files.items():
            Path(folder, name).write_text(text, encoding="utf-8")
        # the stand-in is PyYAML itself for every other thread (libyaml only where _INDEXING is set)
        original = host_utils.yaml
        host_utils.yaml = _IndexYaml(yaml)
        try:
            slow, fast = _host_index_of(folder, fast=False), _host_index_of(folder, fast=True)
        except Exception as error:  # noqa: BLE001 - any failure means the patch does not fit
            return MISMATCH, f"indexing a probe folder with libyaml failed: {type(error).__name__}: {error}"
        finally:
            host_utils.yaml = original
    if fast != slow or len(slow) != 4:
        return MISMATCH, f"libyaml's index of a probe folder differs: {fast!r} != {slow!r}"
    return APPLIES, "TaskManager._get_task_and_group parses its YAML with libyaml (the same index, faster)"


def _install_libyaml_index() -> None:
    import lmms_eval.utils as host_utils
    import yaml
    from lmms_eval.tasks import TaskManager

    original = TaskManager._get_task_and_group
    if _has_wrapper(original, _LIBYAML_MARK):
        return
    if not isinstance(host_utils.yaml, _IndexYaml):
        host_utils.yaml = _IndexYaml(yaml)

    def _get_task_and_group(self: Any, task_dir: str) -> Any:
        _INDEXING.active = True
        try:
            return original(self, task_dir)
        finally:
            _INDEXING.active = False

    _get_task_and_group.__doc__ = original.__doc__
    setattr(_get_task_and_group, _LIBYAML_MARK, True)
    TaskManager._get_task_and_group = mark(_get_task_and_group, original)


def _has_wrapper(function: Any, attribute: str) -> bool:
    """True when one of the pack's wrappers around ``function`` carries ``attribute`` (several patches wrap
    the same host method, in either order)."""
    while is_marked(function):
        if getattr(function, attribute, False):
            return True
        function = getattr(function, "__wrapped__", None)
    return False


# --- 1c. the host's index of its own task folder kept between runs ------------------------------------------

# Even with libyaml, indexing the host's ~1,900 built-in task YAML files (3,200 loads with their includes)
# costs about 1.4 s of CPU per start, the same every time. `host/task_index_cache.py` keeps one build on disk
# with everything it read (file sizes, mtimes, inodes, the folder's listing, the host and PyYAML versions) and
# serves it while all of that holds. Only the host's own folder is cached (the pack's is precomputed in
# tasks/host_index.json; a user's --include_path is indexed as before).
_CACHE_MARK = "_lmms_eval_tasks_index_cache"


def _host_tasks_dir() -> str:
    """The folder the host indexes its built-in tasks from, as its ``initialize_tasks`` names it."""
    import lmms_eval.tasks

    return os.path.dirname(os.path.abspath(lmms_eval.tasks.__file__)) + "/"


def _indexes_as_the_host(manager: Any) -> bool:
    """True when ``manager`` decides what a YAML file is with the host's own TaskManager methods."""
    from lmms_eval.tasks import TaskManager

    return all(
        getattr(type(manager), name, None) is getattr(TaskManager, name)
        for name in ("_config_is_task", "_config_is_group", "_config_is_python_task")
    )


def _probe_task_index_cache() -> tuple[str, str]:
    import lmms_eval.utils as host_utils
    import yaml

    problem = _indexer_shape_problem()
    if problem:
        return MISMATCH, problem
    if not callable(getattr(host_utils, "ignore_constructor", None)):
        return MISMATCH, "lmms_eval.utils has no ignore_constructor (the index parse's !function constructor)"
    if not os.path.isdir(_host_tasks_dir()):
        return MISMATCH, f"the host's task folder {_host_tasks_dir()} is not a folder"
    # a probe folder indexed fresh, then through the cache twice (built, then served), then after a change:
    # the same index every time, and the lines the build logged are the ones a cache hit replays
    with tempfile.TemporaryDirectory(prefix="lmms_eval_tasks_probe_") as folder:
        tasks, cache = Path(folder, "tasks"), Path(folder, "cache")
        (tasks / "sub" / "__pycache__").mkdir(parents=True)
        files = {
            "_template_yaml": "dataset_path: json\ndoc_to_text: !function utils.doc_to_text\n",
            "probe_a.yaml": "include: _template_yaml\ntask: lmms_eval_tasks_probe_a\ntag: probe_tag\n",
            "sub/probe_b.yaml": "task: lmms_eval_tasks_probe_b\ndataset_path: json\n",
            "sub/probe_group.yaml": "group: lmms_eval_tasks_probe_group\ntask: [lmms_eval_tasks_probe_a]\n",
            "sub/probe_note.yaml": "dataset_path: json\n",  # neither task nor group: the host logs a line
            "sub/__pycache__/probe_skipped.yaml": "task: lmms_eval_tasks_probe_skipped\n",
        }
        for name, text in files.items():
            Path(tasks, name).write_text(text, encoding="utf-8")
        original = host_utils.yaml
        host_utils.yaml = original if isinstance(original, _IndexYaml) else _IndexYaml(yaml)
        try:
            found = _probe_cached_indexes(str(tasks), cache)
        except Exception as error:  # noqa: BLE001 - any failure means the patch does not fit
            failure = f"{type(error).__name__}: {error}"
            return MISMATCH, f"indexing a probe folder through the cache failed: {failure}"
        finally:
            host_utils.yaml = original
    if found:
        return MISMATCH, found
    return APPLIES, "TaskManager._get_task_and_group serves the host's own index from a cache while it holds"


def _probe_cached_indexes(tasks: str, cache: Path) -> str | None:
    """None when the cache gives ``tasks``'s fresh index (built, served, rebuilt after a change) and replays
    the lines the build logged; else what differed."""
    import threading as threads

    from lmms_eval.tasks import TaskManager

    indexer = unwrapped(TaskManager._get_task_and_group)
    manager = TaskManager.__new__(TaskManager)
    manager.logger, manager.verbosity = logger, "ERROR"
    thread = threads.get_ident()
    logged: list[tuple[str, str]] = []
    sink = logger.add(
        lambda message: logged.append((message.record["level"].name, message.record["message"])),
        level="TRACE",
        filter=lambda record: record["thread"].id == thread and "lmms_eval_tasks_probe" in record["message"],
    )
    try:
        fresh = dict(indexer(manager, tasks))
        logged.clear()
        built, replay = index_cache.indexed(manager, tasks, lambda: indexer(manager, tasks), "probe", cache)
        build_lines, logged[:] = list(logged), []
        served, replay = index_cache.indexed(manager, tasks, lambda: indexer(manager, tasks), "probe", cache)
        if replay is None or dict(served) != fresh or dict(built) != fresh or len(fresh) != 4:
            return f"the cache gave {dict(served)!r} for a probe folder the host indexes as {fresh!r}"
        if list(replay) != build_lines or not build_lines or logged:
            return f"a cache hit replays {list(replay)!r}; the build logged {build_lines!r}"
        Path(tasks, "sub", "probe_b.yaml").write_text("task: lmms_eval_tasks_probe_c\n", encoding="utf-8")
        changed = dict(indexer(manager, tasks))
        again, replay = index_cache.indexed(manager, tasks, lambda: indexer(manager, tasks), "probe", cache)
        if replay is not None or dict(again) != changed or "lmms_eval_tasks_probe_c" not in changed:
            return "the cache served a probe folder's index after one of its files changed"
    finally:
        logger.remove(sink)
    return None


def _install_task_index_cache() -> None:
    import lmms_eval.utils as host_utils
    import yaml
    from lmms_eval.tasks import TaskManager

    original = TaskManager._get_task_and_group
    if _has_wrapper(original, _CACHE_MARK):
        return
    if not isinstance(host_utils.yaml, _IndexYaml):  # it tells a recording build each file it parses
        host_utils.yaml = _IndexYaml(yaml)
    host_dir = os.path.realpath(_host_tasks_dir())

    def _get_task_and_group(self: Any, task_dir: str) -> Any:
        own = isinstance(task_dir, str) and os.path.realpath(task_dir) == host_dir
        if not (own and _indexes_as_the_host(self)):
            return original(self, task_dir)
        index, replay = index_cache.indexed(
            self, task_dir, lambda: original(self, task_dir), version.host_version()
        )
        if replay is not None:  # served from the cache: what the build would have logged and left behind
            for level, message in replay:  # attributed to the host's initialize_tasks, the indexer's caller
                if hasattr(self.logger, "opt"):
                    self.logger.opt(depth=1).log(level, message)
                else:
                    getattr(self.logger, level.lower())(message)
            host_utils.yaml.add_constructor("!function", host_utils.ignore_constructor)
        return index

    _get_task_and_group.__doc__ = original.__doc__
    setattr(_get_task_and_group, _CACHE_MARK, True)
    TaskManager._get_task_and_group = mark(_get_task_and_group, original)


# --- 2. failures the host logs and swallows ---------------------------------------------------------------

FAILURES: list[BaseException] = []  # filled by the failure_recorder patch; the launcher reads and clears it


def _probe_failure_recorder() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main

    problem = expect_parameters(
        "lmms_eval.__main__.cli_evaluate_single", getattr(host_main, "cli_evaluate_single", None), ["args"]
    ) or missing_lookups("lmms_eval.__main__.cli_evaluate", host_main.cli_evaluate, ["cli_evaluate_single"])
    if problem:
        return MISMATCH, problem
    return APPLIES, "cli_evaluate_single wrapped to record the exceptions the host logs and swallows"


def _install_failure_recorder() -> None:
    import lmms_eval.__main__ as host_main

    original = host_main.cli_evaluate_single
    if is_marked(original):
        return

    def cli_evaluate_single(*args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - recorded, then re-raised for the host to log
            if not isinstance(error, SystemExit) or error.code not in (None, 0):
                FAILURES.append(error)
            raise

    host_main.cli_evaluate_single = mark(cli_evaluate_single, original)


# --- the pack's standard errors in the host's Stderr column ------------------------------------------------

STDERR_ATTRIBUTE = "pack_stderr"  # an aggregation carrying this: items -> its metric's standard error


def _probe_pack_stderr() -> tuple[str, str]:
    import lmms_eval.evaluator_utils as evaluator_utils

    problem = expect_parameters(
        "lmms_eval.evaluator_utils.stderr_for_metric",
        getattr(evaluator_utils, "stderr_for_metric", None),
        ["metric", "bootstrap_iters"],
    )
    if problem:
        return MISMATCH, problem

    # One tiny metric through TaskOutput.calculate_aggregate_metric: its standard error must come from the
    # module's stderr_for_metric (the name the patch replaces) and land under "<metric>_stderr,<filter>".
    def aggregate(items: list[float]) -> float:
        return sum(items) / len(items)

    def answer(original: Any, metric: Any = None, bootstrap_iters: int = 0) -> Any:
        return (lambda items: -1.0) if metric is aggregate else original(metric, bootstrap_iters)

    output = evaluator_utils.TaskOutput.__new__(evaluator_utils.TaskOutput)
    output.task = types.SimpleNamespace(aggregation=lambda: {"probe": aggregate}, args=None)
    output.sample_metrics = {("probe", "none"): [1.0, 2.0, 3.0]}
    output.agg_metrics = {}
    with spying(evaluator_utils, "stderr_for_metric", answer):
        output.calculate_aggregate_metric(bootstrap_iters=10)
    found = output.agg_metrics
    if found.get("probe,none") != 2.0 or found.get("probe_stderr,none") != -1.0:
        return MISMATCH, (
            "TaskOutput.calculate_aggregate_metric no longer fills <metric>_stderr,<filter> from "
            f"stderr_for_metric (a probe metric gave {found})"
        )
    return APPLIES, "stderr_for_metric wrapped: pack aggregations give their bootstrap standard error"


def _install_pack_stderr() -> None:
    import lmms_eval.evaluator_utils as evaluator_utils

    original = evaluator_utils.stderr_for_metric
    if is_marked(original):
        return

    def stderr_for_metric(metric: Any, bootstrap_iters: int) -> Any:
        provider = getattr(metric, STDERR_ATTRIBUTE, None)
        if provider is not None and isinstance(bootstrap_iters, int) and bootstrap_iters > 0:
            return provider
        return original(metric=metric, bootstrap_iters=bootstrap_iters)

    evaluator_utils.stderr_for_metric = mark(stderr_for_metric, original)


# --- 2b. results and samples files the host fails to write, silently -----------------------------------

# Filled by the host_outputs patch: every results/samples file the host wrote in this process, as
# (kind, path or None when the host opened no file for it, bytes before the write, samples expected).
HOST_OUTPUTS: list[tuple[str, Path | None, int, int | None]] = []
_WRITES = threading.local()  # .files: {path: size before} while a host save method runs on this thread
_WRITE_MODES = set("wax+")


class _BlockedWrite(PermissionError):
    """Stops a probe's host save at its first open for writing: a probe writes nothing, full disk or not."""


def _record_writes(event: str, arguments: tuple) -> None:
    """Audit hook: while a wrapped save method runs on this thread, note each file it opens for writing
    (with its size before), as the host itself names it. Raises only to stop a probe's write."""
    if event != "open":
        return
    try:
        files = getattr(_WRITES, "files", None)
        if files is None:
            return
        path, mode, flags = arguments
        if isinstance(path, int) or path is None:
            return
        if mode is not None:
            writing = bool(_WRITE_MODES & set(str(mode)))
        else:
            writing = bool(int(flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if not writing:
            return
        target = Path(os.fsdecode(path)).absolute()
        files.setdefault(target, _size(target))
    except Exception:  # noqa: BLE001, S110 - a recording failure must never break the host's write
        return
    if getattr(_WRITES, "block", False):
        raise _BlockedWrite(f"lmms-eval-tasks probe: {target} not written")


_audit_installed = False


@contextlib.contextmanager
def written_files(block: bool = False) -> Iterator[dict[Path, int]]:
    """The files the code run in this block (on this thread) opens for writing: {path: size before}.
    With ``block`` each such open fails instead (a probe's way to see the names without writing)."""
    global _audit_installed
    import sys

    with _lock:
        if not _audit_installed:  # an audit hook cannot be removed: one for the process, idle off-block
            sys.addaudithook(_record_writes)
            _audit_installed = True
    outer, outer_block = getattr(_WRITES, "files", None), getattr(_WRITES, "block", False)
    files: dict[Path, int] = {}
    _WRITES.files, _WRITES.block = files, block
    try:
        yield files
    finally:
        _WRITES.files, _WRITES.block = outer, outer_block
        if outer is not None:
            for path, size in files.items():
                outer.setdefault(path, size)


@contextlib.contextmanager
def _host_quiet(owner: Any) -> Iterator[None]:
    """No log lines from the host module of ``owner`` while a probe runs it (they would name probe files)."""
    module = owner.__module__
    logger.disable(module)
    try:
        yield
    finally:
        logger.enable(module)


def _probe_host_outputs() -> tuple[str, str]:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    for name, expected in (
        ("save_results_aggregated", ["self", "results", "samples", "datetime_str"]),
        ("save_results_samples", ["self", "task_name", "samples"]),
    ):
        method = getattr(EvaluationTracker, name, None)
        problem = expect_parameters(f"EvaluationTracker.{name}", method, expected)
        if problem:
            return MISMATCH, problem
    # Both save methods of a real tracker, each stopped at its first open for writing (nothing is written):
    # each must open one file, named for this run's results and the task's samples, in its output folder.
    sample = {"arguments": [["probe"]], "resps": [["a"]], "filtered_resps": ["a"], "target": "a", "doc": {}}
    folder = Path(tempfile.gettempdir()).absolute()  # exists: the host's mkdir creates nothing
    with _host_quiet(EvaluationTracker):
        tracker = EvaluationTracker(output_path=str(folder))
        tracker.general_config_tracker.model_name_sanitized = ""
        with written_files(block=True) as results_files, contextlib.suppress(_BlockedWrite):
            unwrapped(EvaluationTracker.save_results_aggregated)(tracker, {}, {}, "2020-01-01T00:00:00")
        with written_files(block=True) as samples_files, contextlib.suppress(_BlockedWrite):
            unwrapped(EvaluationTracker.save_results_samples)(tracker, "lmms_eval_tasks_probe", [sample])
    named = [*results_files, *samples_files]
    if (
        len(results_files) != 1
        or len(samples_files) != 1
        or any(folder not in path.parents for path in named)
    ):
        return MISMATCH, (
            f"EvaluationTracker's save methods opened {[str(path) for path in named]} for one results and "
            f"one samples file in {folder}"
        )
    if "lmms_eval_tasks_probe" not in named[1].name:
        return (
            MISMATCH,
            f"EvaluationTracker.save_results_samples names its file {named[1].name} (no task name)",
        )
    return (
        APPLIES,
        "EvaluationTracker's save methods wrapped to record the files they write, as the host names them",
    )


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _note_outputs(kind: str, tracker: Any, files: dict[Path, int], expected: int | None) -> None:
    """Record what one host save wrote (nothing to check when the host was given no output path)."""
    if not getattr(tracker, "output_path", None) or expected == 0:
        return
    if not files:
        HOST_OUTPUTS.append((kind, None, 0, expected))
    for path, size_before in files.items():
        HOST_OUTPUTS.append((kind, path, size_before, expected))


def _install_host_outputs() -> None:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    aggregated = EvaluationTracker.save_results_aggregated
    samples_method = EvaluationTracker.save_results_samples
    if is_marked(aggregated):
        return

    def save_results_aggregated(self: Any, results: dict, samples: dict, datetime_str: str) -> None:
        with written_files() as files:
            output = aggregated(self, results, samples, datetime_str)
        _note_outputs("results file", self, files, None)
        return output

    def save_results_samples(self: Any, task_name: str, samples: Any) -> None:
        with written_files() as files:
            output = samples_method(self, task_name, samples)
        _note_outputs(f"samples file of {task_name}", self, files, len(samples))
        return output

    EvaluationTracker.save_results_aggregated = mark(save_results_aggregated, aggregated)
    EvaluationTracker.save_results_samples = mark(save_results_samples, samples_method)


def host_output_problems() -> list[str]:
    """One line per results/samples file the host set out to write and did not write completely
    (missing, not JSON, fewer lines than samples), naming the file; [] when all are whole."""
    import json

    problems = []
    for kind, path, offset, expected in HOST_OUTPUTS:
        if path is None:
            problems.append(
                f"the host's {kind} was not written (the host opened no file for it; its log says why)"
            )
            continue
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError as error:
            problems.append(f"{path}: the host's {kind} was not written ({error.strerror or error})")
            continue
        try:
            if expected is None:
                json.loads(data.decode("utf-8"))
            else:
                lines = [line for line in data.decode("utf-8").splitlines() if line.strip()]
                for line in lines:
                    json.loads(line)
                if len(lines) != expected:
                    raise ValueError(f"{len(lines)} of {expected} samples")
        except (UnicodeDecodeError, ValueError) as error:
            reason = str(error).splitlines()[0][:120]
            problems.append(
                f"{path}: the host's {kind} is incomplete ({len(data)} bytes, {reason}): disk full?"
            )
    return problems


# --- cross-task metrics shown on groups only ---------------------------------------------------------------


def drop_undefined_group_metrics(results: dict[str, Any], groups: set[str]) -> list[tuple[str, str]]:
    """Remove from every task (not group) entry of the host's ``results`` the benchmark's group-only metrics
    (``Benchmark.group_metrics``) whose value there is not a finite number, with their ``_stderr`` twins;
    a defined value is never removed. Returns the (task, metric) pairs removed."""
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


def pack_group_stderrs(results: dict[str, Any], groups: set[str], host_stderrs: bool = True) -> list[str]:
    """Set every pack group's ``<metric>_stderr,<filter>`` in the host's ``results`` to the pack's bootstrap
    standard error of the group (scored on the union of its members' records), replacing the host's pooled
    member stderr, which is wrong for cross-task metrics (mean and std over prompts, accuracy curves). With
    ``host_stderrs`` False (the host computed none: ``--bootstrap_iters 0``) nothing changes. Returns the
    groups changed."""
    from lmms_eval_tasks.framework.run_state import current_run

    state = current_run()  # the evaluation whose groups the host is consolidating
    changed: list[str] = []
    if not host_stderrs:
        return changed
    for name in groups:
        values = results.get(name)
        if not isinstance(values, dict):
            continue
        for key in list(values):
            metric, _, filter_name = str(key).partition(",")
            if not filter_name or "_stderr" in metric:
                continue
            value = state.group_stderr(str(name), metric)
            if value is not None:
                values[f"{metric}_stderr,{filter_name}"] = value
                if str(name) not in changed:
                    changed.append(str(name))
    return changed


def _host_computed_stderrs(results: dict[str, Any], groups: set[str]) -> bool:
    """Whether the host computed standard errors at all (``--bootstrap_iters`` > 0): some task row holds a
    numeric ``_stderr`` value (with 0 every one is "N/A")."""
    return any(
        isinstance(value, int | float) and not isinstance(value, bool)
        for name, values in results.items()
        if name not in groups and isinstance(values, dict)
        for key, value in values.items()
        if "_stderr" in str(key)
    )


def _probe_group_only_metrics() -> tuple[str, str]:
    import lmms_eval.evaluator as evaluator
    import lmms_eval.evaluator_utils as evaluator_utils

    consolidate = getattr(evaluator, "consolidate_group_results", None)
    problem = expect_parameters(
        "lmms_eval.evaluator.consolidate_group_results",
        consolidate,
        ["results", "versions", "task_dict", "task_root", "show_group_table", "task_aggregation_list"],
    ) or missing_lookups("lmms_eval.evaluator.evaluate", evaluator.evaluate, ["consolidate_group_results"])
    if problem:
        return MISMATCH, problem
    if not callable(getattr(evaluator_utils, "get_subtask_list", None)):
        return MISMATCH, "lmms_eval.evaluator_utils.get_subtask_list is gone"
    results = {"lmms_eval_tasks_probe": {"alias": "probe", "probe,none": 1.0}}
    output = unwrapped(consolidate)(results, {}, {})
    if (
        not isinstance(output, tuple)
        or output[0] is not results
        or evaluator_utils.get_subtask_list({}) != {}
    ):
        return MISMATCH, "consolidate_group_results no longer returns the results it was given first"
    return APPLIES, (
        "consolidate_group_results wrapped: group-only metrics leave the member tasks' rows; a pack group's "
        "Stderr is the pack's bootstrap of the group"
    )


def _install_group_only_metrics() -> None:
    import lmms_eval.evaluator as evaluator
    import lmms_eval.evaluator_utils as evaluator_utils

    original = evaluator.consolidate_group_results
    if is_marked(original):
        return

    def consolidate_group_results(
        results: Any, versions: Any, task_dict: Any, *args: Any, **kwargs: Any
    ) -> Any:
        # the top-level call only (the host recurses through evaluator_utils): groups are computed first,
        # from member rows that still carry every key, then the members' undefined copies go
        output = original(results, versions, task_dict, *args, **kwargs)
        groups = {name for name, members in evaluator_utils.get_subtask_list(task_dict).items() if members}
        pack_group_stderrs(output[0], groups, _host_computed_stderrs(output[0], groups))
        removed = drop_undefined_group_metrics(output[0], groups)
        if removed:
            logger.debug(f"group-only metrics left out of {len({task for task, _ in removed})} task rows")
        return output

    evaluator.consolidate_group_results = mark(consolidate_group_results, original)


# --- an undefined pack metric reads N/A in the host's table, not NaN ----------------------------------------


def table_view(result_dict: dict[str, Any]) -> dict[str, Any]:
    """A copy of the host's results for printing: a pack task's non-finite metric value becomes None (the
    host prints N/A); the results JSON keeps what the host wrote. The reason is in the pack report."""
    import math

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
    return cut_labels(view)  # a task whose --limit the pack rounded to whole units says so in its row


def cut_labels(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` with each rounded task's row named with its cut (``framework.cuts.table_label``)."""
    from lmms_eval_tasks.framework.cuts import cut_note, table_label

    rows = view.get("results")
    if isinstance(rows, dict):
        view["results"] = {
            name: {**values, "alias": table_label(str(name), str(values.get("alias", name)))}
            if isinstance(values, dict) and cut_note(str(name)) is not None
            else values
            for name, values in rows.items()
        }
    return view


def _probe_table_na() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main
    import lmms_eval.utils as host_utils

    problem = expect_parameters(
        "lmms_eval.utils.make_table",
        getattr(host_utils, "make_table", None),
        ["result_dict", "column", "sort_results"],
    )
    if problem:
        return MISMATCH, problem
    if getattr(host_main, "make_table", None) is None:
        return MISMATCH, "lmms_eval.__main__ no longer imports make_table"
    row = {"alias": "lmms_eval_tasks_probe", "probe_metric,none": None, "probe_metric_stderr,none": "N/A"}
    table = unwrapped(host_utils.make_table)(
        {"results": {"lmms_eval_tasks_probe": row}, "versions": {}, "n-shot": {}, "higher_is_better": {}}
    )
    line = next((line for line in str(table).splitlines() if "probe_metric" in line), "")
    if "N/A" not in line:
        return MISMATCH, f"make_table no longer prints a None metric as N/A (it printed {line.strip()!r})"
    return APPLIES, "make_table wrapped: a pack metric's NaN prints as N/A"


def _install_table_na() -> None:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator
    import lmms_eval.utils as host_utils

    original = host_utils.make_table
    if is_marked(original):
        return

    def make_table(result_dict: Any, column: str = "results", sort_results: bool = False) -> Any:
        return original(table_view(result_dict), column, sort_results)

    wrapped = mark(make_table, original)
    for module in (host_utils, host_main, evaluator):
        if getattr(module, "make_table", None) is original:
            module.make_table = wrapped


# --- each run's context, recorded where the host makes it ------------------------------------------------


def _probe_run_context() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator

    current = getattr(evaluator, "simple_evaluate", None)
    if not callable(current):
        return MISMATCH, "lmms_eval.evaluator.simple_evaluate is gone"
    found = parameters(current)
    missing = [name for name in ("cli_args", "datetime_str") if name not in found]
    if missing:
        return MISMATCH, f"lmms_eval.evaluator.simple_evaluate takes no {', '.join(missing)}"
    single = host_main.cli_evaluate_single
    problem = missing_lookups(
        "lmms_eval.__main__.cli_evaluate_single", single, ["evaluator", "simple_evaluate"]
    )
    problem = problem or missing_keywords(
        "lmms_eval.__main__.cli_evaluate_single", single, ["cli_args", "datetime_str"]
    )
    if problem:
        return MISMATCH, problem
    return APPLIES, "simple_evaluate wrapped to open the run's state (CLI args, run id) for the pack's hooks"


def _install_run_context() -> None:
    import lmms_eval.evaluator as evaluator

    from lmms_eval_tasks.framework.run_state import host_run

    original = evaluator.simple_evaluate
    if is_marked(original):
        return

    @functools.wraps(original)
    def simple_evaluate(*args: Any, **kwargs: Any) -> Any:
        with host_run(kwargs.get("cli_args"), kwargs.get("datetime_str")):
            return original(*args, **kwargs)

    evaluator.simple_evaluate = mark(simple_evaluate, original)


# --- 7. the task whose dataset is loading, for process_docs that need a sibling split ---------------------


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


def _probe_task_dataset_context() -> tuple[str, str]:
    from lmms_eval.api.task import ConfigurableTask

    problem = expect_parameters(
        "ConfigurableTask.download", ConfigurableTask.download, ["self", "dataset_kwargs"]
    )
    if problem:
        return MISMATCH, problem
    # A two-split local dataset through the host's download: process_docs must run while self.dataset holds
    # every split the host loaded (what datasets_read.loading_task_dataset() hands to a hook reading a
    # sibling split).
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
    if seen != [["other", "test"]]:
        return MISMATCH, f"ConfigurableTask.download ran process_docs with self.dataset holding {seen}"
    return APPLIES, "ConfigurableTask.download wrapped so process_docs can read the task's other splits"


def _retried_when_transient(download: Any) -> Any:
    """The host's download, its retries (tenacity: 5 attempts, 2 s apart) kept for what may pass on a second
    try (the network) and skipped for what fails the same way each time: an error of the pack's
    process_docs, and a dataset missing from the cache of an offline run. They used to cost 8 s each."""
    retry_with = getattr(download, "retry_with", None)
    if retry_with is None:  # not tenacity's wrapper (another host): its own behaviour
        return download
    from tenacity import retry_if_exception

    from lmms_eval_tasks.framework.hook_factory import NOT_TRANSIENT

    def transient(error: BaseException) -> bool:
        return not getattr(error, NOT_TRANSIENT, False) and not _missing_offline(error)

    return retry_with(retry=retry_if_exception(transient))


def _missing_offline(error: BaseException) -> bool:
    """A dataset an offline run (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) cannot read: no retry brings it."""
    from lmms_eval_tasks.host.hub_cache import NOT_CACHED_WORDS, offline

    text = f"{type(error).__name__}: {error}"
    return offline() and any(word in text for word in NOT_CACHED_WORDS)


def _install_task_dataset_context() -> None:
    from lmms_eval.api.task import ConfigurableTask

    original = ConfigurableTask.download
    if is_marked(original):
        return
    retried = _retried_when_transient(original)

    def download(self: Any, dataset_kwargs: Any = None) -> Any:
        from lmms_eval_tasks.framework.registry import benchmark_for_task
        from lmms_eval_tasks.host.hub_cache import full_cache_kwargs
        from lmms_eval_tasks.reporting import datasets_read

        with datasets_read.loading(self):  # read by process_docs (``datasets_read.loading_task``)
            if benchmark_for_task(str(getattr(self.config, "task", ""))) is not None:
                whole = full_cache_kwargs(self.DATASET_PATH, self.DATASET_NAME, dataset_kwargs)
                if whole is not None:  # the host's own cache of the whole dataset (VRB: VQAv2) serves it
                    self.pack_dataset_kwargs = dataset_kwargs = whole
            return retried(self, dataset_kwargs)

    download.__doc__ = original.__doc__
    ConfigurableTask.download = mark(download, original)


PATCHES: dict[str, HostPatch] = {
    patch.name: patch
    for patch in (
        HostPatch(
            "pack_task_index",
            "the pack's tasks in every host task index (after built-ins and the user's --include_path)",
            _probe_task_index,
            _install_task_index,
            "the pack's tasks are unknown to the host; run the host with "
            "`--include_path $(lmms-eval-tasks tasks-dir)` instead",
        ),
        HostPatch(
            "libyaml_task_index",
            "the host's task index parsed by libyaml (the same index; about 8 s less CPU per start)",
            _probe_libyaml_index,
            _install_libyaml_index,
            "each start parses the host's task YAML in pure Python (about 10 s of CPU); nothing else changes",
        ),
        HostPatch(
            "task_index_cache",
            "the host's index of its own task folder kept between runs while every file it read is unchanged "
            "(the same index; about 1.4 s less CPU per start)",
            _probe_task_index_cache,
            _install_task_index_cache,
            "each start indexes the host's ~1,900 task YAML files again (about 1.4 s of CPU); nothing else "
            "changes",
        ),
        HostPatch(
            "task_dataset_context",
            "process_docs can read the task's other splits (HallusionBench's non_image from the same source)",
            _probe_task_dataset_context,
            _install_task_dataset_context,
            "hallusionbench reads its non_image split from lmms-lab-encoder/HallusionBench, not from an "
            "overridden dataset_path",
        ),
        HostPatch(
            "failure_recorder",
            "a failed evaluation exits non-zero (the host logs the error and exits 0)",
            _probe_failure_recorder,
            _install_failure_recorder,
            "a failed evaluation may exit 0: read the log for 'Error during evaluation'",
        ),
        HostPatch(
            "pack_stderr",
            "the host's Stderr column shows the pack's bootstrap standard errors (value ± stderr)",
            _probe_pack_stderr,
            _install_pack_stderr,
            "the host's table prints N/A for pack metrics; the standard errors and intervals are in the "
            "pack report (<metric>_stderr and details.uncertainty)",
        ),
        HostPatch(
            "group_only_metrics",
            "a metric defined only across tasks (VRB sub-metrics, DARE std over prompts) is shown on the "
            "groups, not as NaN on every member task",
            _probe_group_only_metrics,
            _install_group_only_metrics,
            "member tasks list those metrics as NaN in the host's table and results; read them on the groups",
        ),
        HostPatch(
            "table_na",
            "an undefined pack metric prints N/A in the host's table, not NaN (the pack report says why)",
            _probe_table_na,
            _install_table_na,
            "undefined pack metrics print NaN in the host's table; the pack report has null and the reason",
        ),
        HostPatch(
            "predict_only_records",
            "--predict_only saves a pack task's records unscored where a run saves them (for `score` later)",
            predict_only.probe,
            predict_only.install,
            "--predict_only leaves no pack records: run without it, or score from a normal run's records",
        ),
        HostPatch(
            "host_outputs",
            "a results or samples file the host fails to write (full disk) fails the run, naming the file",
            _probe_host_outputs,
            _install_host_outputs,
            "a full disk while the host saves may leave a cut results file and exit 0: check the files",
        ),
        HostPatch(
            "run_context",
            "pack reports pair with the host's results (same run id); groups see their own run's records",
            _probe_run_context,
            _install_run_context,
            "pack reports are filed under the current UTC time instead of the host's run id, and groups "
            "are scored from every record of the process; run through the `lmms_eval` launcher",
        ),
        HostPatch(
            "loglikelihood_result",
            "loglikelihood / multiple_choice results reach process_results as (log_prob, is_greedy) pairs",
            fixes.probe_loglikelihood_result,
            fixes.install_loglikelihood_result,
            "loglikelihood and multiple_choice tasks crash in process_results ('too many values to unpack')",
        ),
        HostPatch(
            "no_text_result",
            "a reply without text (content null) reaches the tasks as a failed generation, not as \"\"",
            fixes.probe_no_text_result,
            fixes.install_no_text_result,
            "a server reply with no text is scored as an empty (wrong) answer: check the samples for \"\"",
        ),
        HostPatch(
            "cache_no_failures",
            "--use_cache never keeps a failed request ([LMMS_EVAL_REQUEST_FAILED ...]) as an answer",
            response_cache_fixes.probe_no_failures,
            response_cache_fixes.install_no_failures,
            "with --use_cache a failed request is cached as the model's answer and a rerun does not ask "
            "again: delete the cache folder after a run with failed generations",
        ),
        HostPatch(
            "cache_checkpoints",
            "--use_cache stores answers every LMMS_CACHE_CHECKPOINT_INTERVAL responses, not once per phase",
            response_cache_fixes.probe_checkpoints,
            response_cache_fixes.install_checkpoints,
            "with --use_cache a run killed during generation has cached nothing: its rerun asks for all",
        ),
        HostPatch(
            "cache_no_secrets",
            "--use_cache writes the model arguments into the cache without their secrets (api_key=...)",
            response_cache_fixes.probe_no_secrets,
            response_cache_fixes.install_no_secrets,
            "with --use_cache the cache databases hold --model_args verbatim, api_key included: keep the "
            "key in OPENAI_API_KEY, not in --model_args",
        ),
        HostPatch(
            "cache_pack_version",
            "--use_cache keys answers by the pack's version too: a pack upgrade never reuses older answers",
            response_cache_fixes.probe_pack_version,
            response_cache_fixes.install_pack_version,
            "with --use_cache a pack upgrade that changes a task's images reuses the answers to the old "
            "images: use a new cache folder after upgrading the pack",
        ),
        HostPatch(
            "cache_request_settings",
            "--use_cache keys presence_penalty, frequency_penalty, seed and the image encoding too",
            response_cache_fixes.probe_request_settings,
            response_cache_fixes.install_request_settings,
            "with --use_cache a rerun that changes presence_penalty, frequency_penalty, seed or "
            "LMMS_IMAGE_ENCODE_FORMAT reuses the answers to the other requests: use a new cache folder",
        ),
        HostPatch(
            "cache_version",
            "--use_cache keys answers by the installed lmms-eval version, not the commit of the repository "
            "its virtual environment sits in",
            response_cache_fixes.probe_version,
            response_cache_fixes.install_version,
            "with --use_cache every commit to the repository holding the virtual environment changes every "
            "cache key: a rerun asks the server for everything again",
        ),
        HostPatch(
            "llava_hf_loglikelihood",
            "llava_hf's loglikelihood works on transformers 5",
            fixes.probe_llava_hf_loglikelihood,
            fixes.install_llava_hf_loglikelihood,
            "loglikelihood / multiple_choice tasks may fail on llava_hf",
            models=("llava_hf",),
        ),
        HostPatch(
            "llava_hf_text_only",
            "llava_hf answers requests that carry no image (it returned '')",
            fixes.probe_llava_hf_text_only,
            fixes.install_llava_hf_text_only,
            "llava_hf may answer '' to every text-only question",
            models=("llava_hf",),
        ),
        HostPatch(
            "llava_hf_simple_text_only",
            "--force_simple llava_hf refuses requests without an image (it answered them with the previous "
            "request's inputs)",
            fixes.probe_llava_hf_simple_text_only,
            fixes.install_llava_hf_simple_text_only,
            "with --force_simple, llava_hf answers a request without an image with the previous request's "
            "inputs, silently: run without --force_simple",
            models=("llava_hf",),
        ),
        HostPatch(
            "chat_loglikelihood",
            "--model llava_hf runs loglikelihood / multiple_choice tasks without --force_simple",
            fixes.probe_chat_loglikelihood,
            fixes.install_chat_loglikelihood,
            "loglikelihood / multiple_choice tasks need `--force_simple` on llava_hf",
            models=("llava_hf",),
        ),
    )
}


def check_patch(name: str) -> PatchStatus:
    """What ``apply_patch(name)`` would do on this host, from the patch's probe, without changing anything."""
    patch = PATCHES[name]
    try:
        state, detail = patch.probe()
    except Exception as error:  # noqa: BLE001 - a probe that cannot run means the patch does not apply
        first_line = str(error).splitlines()[0] if str(error) else ""
        state, detail = MISMATCH, f"probe failed: {type(error).__name__}: {first_line}".rstrip(": ")
    if state == MISMATCH:
        return PatchStatus(name, "skipped", detail, patch.summary, patch.without)
    return PatchStatus(name, state, detail, patch.summary, patch.without)


# What happened to each patch in this process (read into every pack report's provenance).
_APPLIED: dict[str, PatchStatus] = {}
_warned: set[str] = set()


def _apply(name: str) -> PatchStatus:
    patch = PATCHES[name]
    with _lock:
        status = check_patch(name)
        if status.state == APPLIES:
            patch.install()
            status = PatchStatus(name, "applied", status.detail, patch.summary, patch.without)
        _APPLIED[name] = status
        patch_record.set_patches(patches_of_this_run())  # read into every report's provenance
        return status


def skipped_line(statuses: Sequence[PatchStatus]) -> str | None:
    """One line naming every skipped patch with its reason (and whether this host version is untested);
    None when none was skipped."""
    skipped = [status for status in statuses if not status.ok]
    if not skipped:
        return None
    installed = version.host_version()
    tested = version.host_tested()
    host = f"lmms-eval {installed or '(not installed)'}" + (
        "" if tested else f", a version the pack's patches were not tested on ({version.TESTED_HOST_TEXT})"
    )
    reasons = "; ".join(f"{status.name} ({status.detail}; without it {status.without})" for status in skipped)
    return f"lmms-eval-tasks: on {host}, {len(skipped)} host patch(es) did not apply: {reasons}"


def _warn_skipped(statuses: Sequence[PatchStatus]) -> None:
    fresh = [status for status in statuses if not status.ok and status.name not in _warned]
    line = skipped_line(fresh)
    if line:
        _warned.update(status.name for status in fresh)
        logger.warning(line)


def apply_patch(name: str) -> PatchStatus:
    """Install one patch when its probe passes (idempotent); otherwise warn once and leave the host alone."""
    status = _apply(name)
    _warn_skipped([status])
    return status


def patches_for(model_names: Sequence[str] = ()) -> list[str]:
    """Names of the patches a run with these ``--model`` values needs, in install order."""
    return [
        name for name, patch in PATCHES.items() if not patch.models or set(patch.models) & set(model_names)
    ]


def apply_patches(model_names: Sequence[str] = (), names: Sequence[str] | None = None) -> list[PatchStatus]:
    """Apply the patches a run needs (all model-independent ones, plus those of the named models) whose
    probes pass; one warning line names those that did not, each with its reason."""
    statuses = [_apply(name) for name in (patches_for(model_names) if names is None else names)]
    _warn_skipped(statuses)
    return statuses


def check_patches() -> list[PatchStatus]:
    """The status of every patch on this host (imports the llava_hf wrapper to probe its patches)."""
    return [check_patch(name) for name in PATCHES]


def patches_of_this_run() -> dict[str, Any] | None:
    """For a report's provenance: the host patches this process applied, found not needed, or skipped
    (with the reason); None when none was tried (the pack used as a library without the launcher)."""
    if not _APPLIED:
        return None
    statuses = list(_APPLIED.values())
    return {
        "applied": [status.name for status in statuses if status.state == "applied"],
        "not_needed": [status.name for status in statuses if status.state == NOT_NEEDED],
        "skipped": {status.name: status.detail for status in statuses if not status.ok},
        "host_tested": version.host_tested(),
    }
