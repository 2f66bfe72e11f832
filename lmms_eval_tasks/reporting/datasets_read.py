"""Which datasets a run read (id, config, split, revision: the hub commit the cache holds, else the
dataset's fingerprint), for every report's provenance; noted by ``process_docs``. Thread-safe."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_LOCAL_BUILDERS = {"parquet", "json", "csv", "arrow", "text", "imagefolder", "audiofolder"}
_lock = threading.Lock()
_READ: dict[str, list[dict[str, Any]]] = {}
_GROUPS: dict[str, list[str]] = {}  # group -> its member tasks, noted when the group is scored
_LOADING = threading.local()  # the host tasks whose ``download`` runs in this thread, innermost last


@contextmanager
def loading(task: Any) -> Iterator[None]:
    """Mark host task ``task`` as loading its dataset (and running ``process_docs``) in this thread; set by
    the ``task_dataset_context`` host patch around ``ConfigurableTask.download``."""
    stack = _LOADING.__dict__.setdefault("stack", [])
    stack.append(task)
    try:
        yield
    finally:
        stack.pop()


def loading_task() -> Any | None:
    """The host task whose ``download`` (dataset load and ``process_docs``) is running, or None."""
    stack = getattr(_LOADING, "stack", None)
    return stack[-1] if stack else None


def loading_task_dataset() -> Any | None:
    """The DatasetDict the host just loaded for the task whose ``process_docs`` is running (a sibling split
    read from it follows the user's ``dataset_path``), or None."""
    return getattr(loading_task(), "dataset", None)


def describe(dataset: Any, source: Any = None) -> dict[str, Any]:
    """``{id, config, split, revision, revision_kind, data_files}`` of a ``datasets.Dataset`` loaded by
    host task ``source`` (or None); ``revision_kind``: "hub commit" or "fingerprint"."""
    info = getattr(dataset, "info", None)
    path = getattr(source, "DATASET_PATH", None)
    config = getattr(source, "DATASET_NAME", None) or getattr(info, "config_name", None)
    kwargs = getattr(source, "pack_dataset_kwargs", None) or (  # the whole cached dataset, when it served
        getattr(getattr(source, "config", None), "dataset_kwargs", None) or {}
    )
    files = getattr(dataset, "cache_files", None) or []
    cache_file = Path(files[0]["filename"]) if files else None
    split = getattr(dataset, "split", None)
    entry: dict[str, Any] = {
        "id": path,
        "config": None if config is None else str(config),
        "split": None if split is None else str(split),
        "revision": None,
        "revision_kind": None,
        "data_files": kwargs.get("data_files") if isinstance(kwargs, dict) else None,
    }
    hub = isinstance(path, str) and path not in _LOCAL_BUILDERS and not Path(path).exists()
    if hub and cache_file is not None and _COMMIT.match(cache_file.parent.name):
        entry["revision"], entry["revision_kind"] = cache_file.parent.name, "hub commit"
        return entry
    if not hub and cache_file is not None and (cache_file.parent.parent / "dataset_dict.json").is_file():
        entry["id"] = str(cache_file.parent.parent)  # a prepared folder (save_to_disk)
    entry["revision"] = getattr(dataset, "_fingerprint", None)
    entry["revision_kind"] = "fingerprint" if entry["revision"] else None
    return entry


def record(task: str, entry: dict[str, Any], replace: bool = False) -> None:
    """Note that ``task`` read ``entry`` (``replace``: instead of what it noted so far)."""
    with _lock:
        entries = [] if replace else _READ.setdefault(task, [])
        if entry not in entries:
            entries.append(entry)
        _READ[task] = entries


def datasets_read(task: str) -> list[dict[str, Any]]:
    """What ``task`` read in this process; for a group, what its member tasks read (in member order)."""
    with _lock:
        if task in _READ:
            return [dict(entry) for entry in _READ[task]]
        members = list(_GROUPS.get(task, []))  # a group's members (record_group), else none
    found: list[dict[str, Any]] = []
    for member in members:
        for entry in datasets_read(member):
            if entry not in found:
                found.append(entry)
    return found


def record_group(group: str, members: Sequence[str]) -> None:
    """Note ``group``'s member tasks (its group aggregation does, before its report is built)."""
    with _lock:
        _GROUPS[group] = list(members)


def clear() -> None:
    """Forget everything recorded (tests)."""
    with _lock:
        _READ.clear()
        _GROUPS.clear()
