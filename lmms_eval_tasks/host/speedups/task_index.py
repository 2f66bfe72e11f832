"""The host's task index built faster, the same (patches ``libyaml_task_index``, ``task_index_cache``)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.host import version
from lmms_eval_tasks.host.patch_kit import (
    APPLIES,
    MISMATCH,
    bare,
    expect,
    expect_lookups,
    expect_parameters,
    replaces,
    unwrapped,
)
from lmms_eval_tasks.host.speedups import task_index_cache as index_cache

# --- libyaml_task_index: ~3,200 YAML loads per start in ~1.5 s of CPU instead of ~10 (pure Python) ----------
# Only the index's "simple" parse moves: a full parse resolves `!function` from `loader.name`, which
# libyaml's loader lacks.
_INDEXING = threading.local()  # set while this thread's TaskManager._get_task_and_group runs


class _IndexYaml:
    """The `yaml` module of `lmms_eval.utils`; its ``full_load`` parses with libyaml while this thread builds
    a task index and tells a recording build (``task_index_cache``) each file it parsed."""

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

    manager = bare(TaskManager, logger=logger, verbosity="ERROR")
    _INDEXING.active = fast
    try:
        return dict(unwrapped(TaskManager._get_task_and_group)(manager, folder))
    finally:
        _INDEXING.active = False


# A probe task folder with what the built-ins use: an include, !function, a tag, a group, a file that is
# neither (the host logs a line) and a folder the host skips.
PROBE_FILES = {
    "_template_yaml": "dataset_path: json\ndoc_to_text: !function utils.doc_to_text\n",
    "probe_a.yaml": "include: _template_yaml\ntask: lmms_eval_tasks_probe_a\ntag: probe_tag\n",
    "sub/probe_b.yaml": "task: lmms_eval_tasks_probe_b\ndataset_path: json\n"
    "process_results: !function utils.process_results\nmetric_list:\n  - metric: acc\n",
    "sub/probe_group.yaml": "group: lmms_eval_tasks_probe_group\ntask:\n  - lmms_eval_tasks_probe_a\n",
    "sub/probe_note.yaml": "dataset_path: json\n",
    "sub/__pycache__/probe_skipped.yaml": "task: lmms_eval_tasks_probe_skipped\n",
}


@contextlib.contextmanager
def _probe_folder() -> Iterator[Path]:
    """A temporary folder with ``PROBE_FILES`` in ``tasks/``, indexed in the block through the YAML stand-in
    (PyYAML itself for every other thread: libyaml only where ``_INDEXING`` is set)."""
    import lmms_eval.utils as host_utils
    import yaml

    original = host_utils.yaml
    with tempfile.TemporaryDirectory(prefix="lmms_eval_tasks_probe_") as folder:
        for name, text in PROBE_FILES.items():
            Path(folder, "tasks", name).parent.mkdir(parents=True, exist_ok=True)
            Path(folder, "tasks", name).write_text(text, encoding="utf-8")
        host_utils.yaml = original if isinstance(original, _IndexYaml) else _IndexYaml(yaml)
        try:
            yield Path(folder)
        finally:
            host_utils.yaml = original


def _expect_indexer_shape() -> None:
    """What the task-index patches need: ``TaskManager._get_task_and_group(self, task_dir)`` reading YAML
    through ``lmms_eval.utils.load_yaml_config`` (``yaml.full_load``) with the yaml module."""
    import lmms_eval.utils as host_utils
    from lmms_eval.tasks import TaskManager

    indexer = getattr(TaskManager, "_get_task_and_group", None)
    expect_parameters("TaskManager._get_task_and_group", indexer, ["self", "task_dir"])
    expect_lookups("lmms_eval.utils.load_yaml_config", host_utils.load_yaml_config, ["yaml", "full_load"])
    expect(
        isinstance(host_utils.yaml, _IndexYaml | types.ModuleType),
        f"lmms_eval.utils.yaml is {type(host_utils.yaml).__name__}, not the yaml module",
    )


def probe_libyaml_index() -> tuple[str, str]:
    import yaml

    expect(
        getattr(yaml, "__with_libyaml__", False) and hasattr(yaml, "CFullLoader"),
        "PyYAML has no libyaml here (the index is parsed by pure Python, about 7x slower)",
    )
    _expect_indexer_shape()
    try:
        with _probe_folder() as folder:
            tasks = str(folder / "tasks")
            slow, fast = _host_index_of(tasks, fast=False), _host_index_of(tasks, fast=True)
    except Exception as error:  # noqa: BLE001 - any failure means the patch does not fit
        return MISMATCH, f"indexing a probe folder with libyaml failed: {type(error).__name__}: {error}"
    expect(
        fast == slow and len(slow) == 4, f"libyaml's index of a probe folder differs: {fast!r} != {slow!r}"
    )
    return APPLIES, "TaskManager._get_task_and_group parses its YAML with libyaml (the same index, faster)"


def install_libyaml_index() -> None:
    import lmms_eval.utils as host_utils
    import yaml
    from lmms_eval.tasks import TaskManager

    if not isinstance(host_utils.yaml, _IndexYaml):
        host_utils.yaml = _IndexYaml(yaml)

    @replaces(TaskManager, "_get_task_and_group")
    def index_with_libyaml(original: Any, self: Any, task_dir: str) -> Any:
        _INDEXING.active = True
        try:
            return original(self, task_dir)
        finally:
            _INDEXING.active = False


# --- task_index_cache: the host's index of its own task folder kept between runs ----------------------------

# Only the host's own folder is cached (``task_index_cache``): the pack's is precomputed in
# tasks/host_index.json, a user's --include_path is indexed as before.


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


def probe_task_index_cache() -> tuple[str, str]:
    import lmms_eval.utils as host_utils

    _expect_indexer_shape()
    expect(
        callable(getattr(host_utils, "ignore_constructor", None)),
        "lmms_eval.utils has no ignore_constructor (the index parse's !function constructor)",
    )
    expect(os.path.isdir(_host_tasks_dir()), f"the host's task folder {_host_tasks_dir()} is not a folder")
    # a probe folder indexed fresh, then through the cache twice (built, then served), then after a change:
    # the same index every time, and the lines the build logged are the ones a cache hit replays
    try:
        with _probe_folder() as folder:
            found = _probe_cached_indexes(str(folder / "tasks"), folder / "cache")
    except Exception as error:  # noqa: BLE001 - any failure means the patch does not fit
        return MISMATCH, f"indexing a probe folder through the cache failed: {type(error).__name__}: {error}"
    expect(not found, str(found))
    return APPLIES, "TaskManager._get_task_and_group serves the host's own index from a cache while it holds"


def _probe_cached_indexes(tasks: str, cache: Path) -> str | None:
    """None when the cache gives ``tasks``'s fresh index (built, served, rebuilt after a change) and replays
    the lines the build logged; else what differed."""
    from lmms_eval.tasks import TaskManager

    indexer = unwrapped(TaskManager._get_task_and_group)
    manager = bare(TaskManager, logger=logger, verbosity="ERROR")
    thread = threading.get_ident()
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


def install_task_index_cache() -> None:
    import lmms_eval.utils as host_utils
    import yaml
    from lmms_eval.tasks import TaskManager

    if not isinstance(host_utils.yaml, _IndexYaml):  # it tells a recording build each file it parses
        host_utils.yaml = _IndexYaml(yaml)
    host_dir = os.path.realpath(_host_tasks_dir())

    @replaces(TaskManager, "_get_task_and_group")
    def index_from_cache(original: Any, self: Any, task_dir: str) -> Any:
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
