"""One evaluation run's state: arguments, run id, pack folder, each task's records, scores and each group's
metrics; ``run_context`` opens one per host evaluation, hooks outside one share a ``standalone`` state."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(eq=False)
class RunState:
    """One run: the host's ``args``, ``run_id``, pack folder, every task's records so far (thread-safe)."""

    args: Any = None
    run_id: str | None = None
    host: bool = False
    folder: Path | None = None
    _records: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # key -> (the items kept alive so their ids stay unique, the computed result or the exception it raised)
    _scores: dict[tuple, tuple[Any, Any]] = field(default_factory=dict, repr=False)
    _score_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # group name -> the metrics of its last scoring by a group aggregator (``group_stderr`` reads them)
    _group_metrics: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # name -> a room's configuration, read once per host run (``config``)
    _config: dict[str, Any] = field(default_factory=dict, repr=False)

    def config(self, name: str, read: Callable[[], Any]) -> Any:
        """``read()`` (a configuration from the environment), once per host run under ``name``; outside a
        host evaluation on every call (scripts and tests change the environment between calls)."""
        if not self.host:
            return read()
        with self._lock:
            if name not in self._config:
                self._config[name] = read()
            return self._config[name]

    def add_records(self, task: str, records: list[dict[str, Any]], args: Any = None) -> None:
        """Keep ``task``'s records for its groups (the per-task aggregation calls this before scoring); a
        standalone state also keeps the latest ``args`` (a host run's are those the host passed)."""
        with self._lock:
            self._records[task] = records
            if args is not None and not self.host:
                self.args = args

    def records_of(self, tasks: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The records kept for each of ``tasks`` that has any, in the order given."""
        with self._lock:
            return {task: self._records[task] for task in tasks if task in self._records}

    def score_once(self, key: str, items: Sequence[Any], compute: Callable[[Sequence[Any]], Any]) -> Any:
        """``compute(items)``, computed once in this run for the same key and item objects (``once``)."""
        with self.once(key, items) as slot:
            if slot.missing:
                slot.result = compute(items)
        return slot.result

    def once(self, key: str, items: Sequence[Any]) -> Once:
        """``with state.once(key, items) as slot: if slot.missing: slot.result = ...``: one result per key and
        items, under the scoring lock; a failure is kept and re-raised instead of judging again."""
        return Once(self, (key, tuple(map(id, items))), items)

    def scored(self, key: str, items: Sequence[Any]) -> Any:
        """What ``once`` kept for this key and these item objects; None when nothing was, or it failed."""
        with self._score_lock:
            hit = self._scores.get((key, tuple(map(id, items))))
        return None if hit is None or isinstance(hit[1], BaseException) else hit[1]

    def set_group_metrics(self, group: str, metrics: dict[str, Any]) -> None:
        """Keep the metrics of ``group``'s scoring (its standard errors go to the host's group table)."""
        with self._lock:
            self._group_metrics[group] = metrics

    def group_stderr(self, group: str, metric: str) -> float | str | None:
        """The pack's standard error of ``metric`` on ``group`` ("N/A" when it has none; None when the run
        did not score it), for the host patch "group_only_metrics"."""
        with self._lock:
            metrics = self._group_metrics.get(group)  # its last scoring in this run, None when not scored
        if metrics is None or metric not in metrics:
            return None
        value = metrics.get(f"{metric}_stderr")
        return value if isinstance(value, int | float) and not isinstance(value, bool) else "N/A"

    def claim_folder(self, make: Any) -> Path:
        """The run's pack folder: ``make()`` on first call (under the lock), the same folder afterwards."""
        with self._lock:
            if self.folder is None or not self.folder.is_dir():
                self.folder = make()
            return self.folder


class Once:
    """One ``RunState.once`` slot: ``missing`` until a result is kept, then ``result``."""

    def __init__(self, state: RunState, key: tuple, items: Sequence[Any]) -> None:
        self.state, self.key, self.items = state, key, items
        self.missing, self.result = True, None

    def __enter__(self) -> Once:
        self.state._score_lock.acquire()
        hit = self.state._scores.get(self.key)
        if hit is not None and isinstance(hit[1], BaseException):
            self.state._score_lock.release()
            raise hit[1]
        if hit is not None:
            self.missing, self.result = False, hit[1]
        return self

    def __exit__(self, kind: Any, error: BaseException | None, trace: Any) -> None:
        try:
            if self.missing and (error is None or isinstance(error, Exception)):
                self.state._scores[self.key] = (self.items, self.result if error is None else error)
        finally:
            self.state._score_lock.release()


_lock = threading.Lock()
_active: list[RunState] = []  # host evaluations in progress, innermost last
_standalone = RunState()


def begin_run(args: Any, datetime_str: str | None) -> RunState:
    """Open the state of a host evaluation (run id: ``datetime_str``, '-' for ':')."""
    run_id = datetime_str.replace(":", "-") if isinstance(datetime_str, str) and datetime_str else None
    state = RunState(args=args, run_id=run_id, host=True)
    with _lock:
        _active.append(state)
    return state


def end_run(state: RunState) -> None:
    """Close a host evaluation's state (its records are released)."""
    with _lock:
        if state in _active:
            _active.remove(state)


@contextmanager
def host_run(args: Any, datetime_str: str | None) -> Iterator[RunState]:
    """``begin_run`` ... ``end_run`` around one host evaluation."""
    state = begin_run(args, datetime_str)
    try:
        yield state
    finally:
        end_run(state)


def current_run(args: Any = None) -> RunState:
    """The state of the run ``args`` belongs to: the open host evaluation with these very arguments, else
    the innermost open one, else the process's standalone state."""
    with _lock:
        if args is not None:
            for state in reversed(_active):
                if state.args is args:
                    return state
        if _active:
            return _active[-1]
    return _standalone
