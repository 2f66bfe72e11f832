"""Small helpers shared by the task hooks: score a task's records once, write the pack's own reports.

The host calls one aggregation function per metric, each with its own list of per-sample values. Our
hooks return the same record dict for every metric key, so all lists hold the same records; ``score_once``
computes the full metrics dict (judging included) once per task and every aggregation reads its key.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lmms_eval_tasks import __version__

_lock = threading.Lock()
# key -> (the items list kept alive so ids stay unique, computed metrics)
_cache: dict[tuple, tuple[list, dict[str, Any]]] = {}


def score_once(
    task_key: str, items: list[Any], compute: Callable[[list[Any]], dict[str, Any]]
) -> dict[str, Any]:
    """Return ``compute(items)``, computed once for the same task and the same record objects."""
    key = (task_key, tuple(id(item) for item in items))
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit[1]
        result = compute(items)
        _cache[key] = (items, result)
        return result


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
    """The run's ``--output_path`` as a folder, or None (Python API, or no output path given)."""
    path = getattr(args, "output_path", None) if args is not None else None
    if not path:
        return None
    path = Path(path)
    folder = path.parent if path.suffix == ".json" else path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def run_metadata(**extra: Any) -> dict[str, Any]:
    """What every pack report records: the pack version plus the caller's settings (judge, seed, ...)."""
    return {"pack_version": __version__, **extra}


def write_report(
    args: Any, task_name: str, report: dict[str, Any], samples: list[dict[str, Any]] | None = None
) -> Path | None:
    """Write ``<output>/lmms_eval_tasks/<task>_report.json`` and ``_samples.jsonl``; return the report path.

    These files complement the host's results and samples files: they hold what the host cannot (judge
    verdicts per repeat, unjudged items, diagnostics) and survive multi-process gathering, which copies
    the per-sample dicts before our aggregation annotates them.
    """
    folder = output_dir(args)
    if folder is None:
        return None
    folder = folder / "lmms_eval_tasks"
    folder.mkdir(parents=True, exist_ok=True)
    report_path = folder / f"{task_name}_report.json"
    temporary = report_path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    temporary.replace(report_path)
    if samples is not None:
        samples_path = folder / f"{task_name}_samples.jsonl"
        temporary = samples_path.with_suffix(".jsonl.tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            for sample in samples:
                handle.write(json.dumps(sample, ensure_ascii=False, default=str) + "\n")
        temporary.replace(samples_path)
    return report_path
