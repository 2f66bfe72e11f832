"""The host's index of its own task folder kept between runs (patch ``task_index_cache``) while everything its
build read holds (versions, YAML listing, files opened, includes); a hit replays the lines it logged."""

from __future__ import annotations

import collections
import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

FORMAT = 1
# The folders the host's indexer (TaskManager._get_task_and_group, lmms-eval 0.7.3) does not descend into.
IGNORED_DIRS = ("__pycache__", ".ipynb_checkpoints")
_LOG_LEVELS = ("trace", "debug", "info", "success", "warning", "error", "critical")


def cache_dir() -> Path:
    """``$LMMS_EVAL_TASKS_CACHE/host_task_index`` (``~/.cache/lmms_eval_tasks/host_task_index``)."""
    from lmms_eval_tasks import cache_root

    return cache_root() / "host_task_index"


def cache_file(task_dir: str, folder: Path | None = None) -> Path:
    """The cache file of one task folder (named by the folder's path as the host was given it)."""
    name = hashlib.sha256(task_dir.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return (folder or cache_dir()) / f"{name}.json"


def yaml_listing(task_dir: str) -> list[str]:
    """The ``*.yaml`` files the host's indexer reads under ``task_dir``, in its order, relative to it."""
    listing = []
    for root, dirs, files in os.walk(task_dir):
        dirs[:] = [name for name in dirs if name not in IGNORED_DIRS]
        folder = root[len(task_dir) :]  # os.walk's roots are task_dir itself, then task_dir joined with more
        listing += [folder + "/" + name for name in files if name.endswith(".yaml")]
    return listing


def file_state(path: str) -> list[int] | None:
    """[size, mtime_ns, inode] of ``path`` (relative paths from the working directory), None if missing."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ino]


def environment_key(host_version: str | None) -> dict[str, Any]:
    """What besides the files decides the index: the cache format, the host and the YAML parser."""
    import yaml

    return {"format": FORMAT, "host": host_version, "pyyaml": getattr(yaml, "__version__", None)}


@dataclass
class Build:
    """What one index build read and logged; ``problem`` says why it cannot be cached (None: it can)."""

    opened: dict[str, list[int] | None] = field(default_factory=dict)
    absent: set[str] = field(default_factory=set)
    messages: list[tuple[str, str]] = field(default_factory=list)
    problem: str | None = None

    def read(self, stream: Any, data: Any) -> None:
        """One YAML file the build parsed: ``stream`` as the host opened it, ``data`` what it parsed to."""
        name = getattr(stream, "name", None)
        if not isinstance(name, str):
            self.problem = f"a YAML stream without a file name ({type(stream).__name__})"
            return
        self.opened.setdefault(name, file_state(name))
        includes = data.get("include") if isinstance(data, dict) else None
        for include in [includes] if isinstance(includes, str) else includes or []:
            # the host opens the include as given when that is a file, else next to the including file
            if isinstance(include, str) and not os.path.isfile(include):
                self.absent.add(include)


_RECORDING = threading.local()  # .build: the Build this thread's index build records into


def recording_build() -> Build | None:
    """The Build this thread is recording (read by the YAML stand-in in ``host/patches.py``), or None."""
    return getattr(_RECORDING, "build", None)


class _RecordingLogger:
    """The indexer's logger during a recorded build: each message goes to the real logger as the host
    logged it (attributed to the host's line) and is kept for replay when the cache serves the index."""

    def __init__(self, real: Any, build: Build) -> None:
        self._real, self._build = real, build

    def __getattr__(self, name: str) -> Any:
        if name not in _LOG_LEVELS:
            self._build.problem = f"the indexer used logger.{name}"
            return getattr(self._real, name)

        def log(message: Any, *args: Any, **kwargs: Any) -> None:
            if args or kwargs or not isinstance(message, str):
                self._build.problem = "the indexer logged a formatted message"
            else:
                self._build.messages.append((name.upper(), message))
            getattr(self._real.opt(depth=1), name)(message, *args, **kwargs)

        return log


def record(manager: Any, build_index: Callable[[], Any]) -> tuple[Any, Build]:
    """Run ``build_index()`` (the host's indexer on ``manager``), recording what it reads and logs."""
    build = Build()
    real_logger = getattr(manager, "logger", None)
    if hasattr(real_logger, "opt"):
        manager.logger = _RecordingLogger(real_logger, build)
    else:
        build.problem = f"the indexer's logger is {type(real_logger).__name__}, not loguru's"
    previous = recording_build()
    _RECORDING.build = build
    try:
        index = build_index()
    finally:
        _RECORDING.build = previous
        if hasattr(real_logger, "opt"):
            manager.logger = real_logger
    return index, build


# cache file path -> (that file's state, its payload): this process's last read or write of it, so a second
# index in one process reads no JSON, and one whose write failed is still not built twice
_MEMO: dict[str, tuple[list[int] | None, dict[str, Any]]] = {}
_memo_lock = threading.Lock()
_warned_writes: set[str] = set()


class Damaged(ValueError):
    """A cache file that is not a whole payload of this format."""


def payload_of(
    task_dir: str, listing: list[str], index: Any, build: Build, host_version: str | None
) -> dict[str, Any] | None:
    """The cache payload of one recorded build (``listing``: the folder's YAML files, taken before it);
    None when it cannot be kept (why: a debug line)."""
    problem = build.problem
    if problem is None and (missing := [path for path, state in build.opened.items() if state is None]):
        problem = f"{missing[0]} was read but cannot be found now"
    entries = dict(index) if isinstance(index, dict) else None
    if problem is None:
        try:
            round_trip = json.loads(json.dumps(entries))
        except (TypeError, ValueError) as error:
            round_trip, problem = None, f"the index is not JSON: {error}"
        if problem is None and (round_trip != entries or not isinstance(index, dict)):
            problem = "the index does not survive JSON unchanged"
    if problem is not None:
        logger.debug(f"host task index of {task_dir} not cached: {problem}")
        return None
    return {
        **environment_key(host_version),
        "task_dir": task_dir,
        "listing": listing,
        "opened": build.opened,
        "absent": sorted(build.absent),
        "messages": [list(message) for message in build.messages],
        "index": round_trip,  # a copy: the caller keeps (and may change) the entries it was given
    }


def store(path: Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` atomically; a failure is one warning per file (the run goes on)."""
    from lmms_eval_tasks.reporting.schema import write_atomically

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(payload, separators=(",", ":")))
    except OSError as error:
        if str(path) not in _warned_writes:
            _warned_writes.add(str(path))
            logger.warning(
                f"lmms-eval-tasks: could not write the host task index cache {path} ({error}); each run "
                "indexes the host's tasks again: set LMMS_EVAL_TASKS_CACHE to a writable folder"
            )
    with _memo_lock:
        _MEMO[str(path)] = (file_state(str(path)), payload)


def _read(path: Path) -> dict[str, Any] | None:
    """The payload in ``path`` (this process's own copy while the file is unchanged); None when absent."""
    key = str(path)
    state = file_state(key)
    with _memo_lock:
        memo = _MEMO.get(key)
    if memo is not None and memo[0] == state:
        return memo[1]
    if state is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    try:
        payload = json.loads(text)
    except ValueError as error:
        raise Damaged(f"not JSON ({error})") from None
    _check_shape(payload)
    with _memo_lock:
        _MEMO[key] = (state, payload)
    return payload


def _check_shape(payload: Any) -> None:
    """Raise ``Damaged`` unless ``payload`` has every field of this format with its type."""
    if not isinstance(payload, dict):
        raise Damaged(f"holds {type(payload).__name__}, not an object")
    expected = {
        "format": int, "task_dir": str, "listing": list, "opened": dict, "absent": list, "messages": list,
        "index": dict,
    }  # fmt: skip
    for name, kind in expected.items():
        if not isinstance(payload.get(name), kind):
            raise Damaged(f"field {name!r} is missing or not {kind.__name__}")
    if payload["format"] != FORMAT:
        return  # another format: stale, not damaged
    for name, entry in payload["index"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise Damaged(f"index entry {name!r} is {entry!r}")
    for message in payload["messages"]:
        if not (isinstance(message, list) and len(message) == 2 and all(isinstance(m, str) for m in message)):
            raise Damaged(f"log line {message!r}")


def stale_reason(payload: dict[str, Any], task_dir: str, host_version: str | None) -> str | None:
    """Why ``payload`` no longer gives the host's index of ``task_dir``; None when it does."""
    expected = {**environment_key(host_version), "task_dir": task_dir}
    for name, value in expected.items():
        if payload.get(name) != value:
            return f"{name} was {payload.get(name)!r}, is {value!r}"
    for path, state in payload["opened"].items():
        if file_state(path) != state:
            return f"{path} changed"
    for include in payload["absent"]:
        if os.path.isfile(include):
            return f"an include named {include!r} now exists in the working directory"
    if yaml_listing(task_dir) != payload["listing"]:
        return "a YAML file was added, removed or renamed"
    return None


def lookup(
    task_dir: str, host_version: str | None, folder: Path | None = None
) -> tuple[dict[str, Any], tuple[tuple[str, str], ...]] | None:
    """The cached index of ``task_dir`` and the lines its build logged (to replay), when the cache still
    matches every file it was built from."""
    path = cache_file(task_dir, folder)
    try:
        payload = _read(path)
    except Damaged as error:
        logger.warning(
            f"lmms-eval-tasks: the host task index cache {path} is damaged ({error}); indexing the host's "
            "tasks again and rewriting it"
        )
        return None
    if payload is None:
        return None
    reason = stale_reason(payload, task_dir, host_version)
    if reason is not None:
        logger.debug(f"host task index cache {path} not used: {reason}")
        return None
    # fresh copies of the entries' lists: a caller may change a group's ``task`` list, as the host's are its
    entries = {
        name: {key: list(value) if isinstance(value, list) else value for key, value in entry.items()}
        for name, entry in payload["index"].items()
    }
    return entries, tuple((level, message) for level, message in payload["messages"])


def indexed(
    manager: Any,
    task_dir: str,
    build_index: Callable[[], Any],
    host_version: str | None,
    folder: Path | None = None,
) -> tuple[Any, tuple[tuple[str, str], ...] | None]:
    """The host's index of ``task_dir`` and, when the cache served it, the log lines its build wrote (to
    replay); else ``build_index()``'s (recorded, then stored for the next run) and None."""
    found = lookup(task_dir, host_version, folder)
    if found is not None:
        entries, messages = found
        return collections.defaultdict(None, entries), messages
    listing = yaml_listing(task_dir)  # before the build: a file added meanwhile makes the next run rebuild
    index, build = record(manager, build_index)
    payload = payload_of(task_dir, listing, index, build, host_version)
    if payload is not None:
        store(cache_file(task_dir, folder), payload)
    return index, None
