"""The pack report (docs/reports.md): one versioned schema for every benchmark, strict JSON, written
atomically into the run's own folder with ``latest.json`` beside it, read back validated."""

from __future__ import annotations

import json
import math
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import __version__
from lmms_eval_tasks.judges.redact import REDACTED, safe_url, scrub
from lmms_eval_tasks.reporting import model_substitution as substitution
from lmms_eval_tasks.reporting import patch_record
from lmms_eval_tasks.reporting.datasets_read import datasets_read

SCHEMA_VERSION = 1
PACK_FOLDER = "lmms_eval_tasks"
LATEST_INDEX = "latest.json"
REPORT_SUFFIX = "_report.json"
SAMPLES_SUFFIX = "_samples.jsonl"
TOP_LEVEL_KEYS = ("schema_version", "benchmark", "task", "metrics", "details", "provenance", "warnings")
PROVENANCE_KEYS = tuple(
    "pack_version host_version model model_args task run_id timestamp command_line seeds settings judge "
    "corruption limit deviations".split()
)
DATASET_READ_KEYS = ("id", "config", "split", "revision")  # each entry of provenance.datasets
HOST_SEED_NAMES = ("random", "numpy", "torch", "fewshot")
# A secret-looking argument name: ends with key/token/secret/... as a word (api_key, hf_token, --password),
# not merely containing it (tokenizer, max_new_tokens stay readable).
_SECRET_KEY = re.compile(
    r"(?i)(?:^|[-_])(?:key|token|secret|password|passwd|pwd|auth|authorization|credentials?)$"
)
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class ReportError(ValueError):
    """A report object or file that does not follow the schema; the message names the field."""


# ---- strict JSON -------------------------------------------------------------------------------------


def to_strict_json(value: Any) -> Any:
    """A JSON-safe copy of ``value`` (NaN/inf -> None, tuples/sets -> lists, numpy scalars -> Python, other
    objects -> ``str``), in one loop: no call per value (a report and its records hold thousands)."""
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while pending:
        target, slot, item = pending.pop()
        if item is None or isinstance(item, (bool, str)):
            target[slot] = item
        elif isinstance(item, int):
            target[slot] = int(item)
        elif isinstance(item, float):
            target[slot] = item if math.isfinite(item) else None
        elif isinstance(item, Mapping):
            copied: dict[str, Any] = {}
            target[slot] = copied
            children = list(item.items())
            for key, _ in children:  # the keys in their order; the values (the last of equal keys) below
                copied[str(key)] = None
            for key, inner in reversed(children):
                pending.append((copied, str(key), inner))
        elif isinstance(item, (list, tuple, set, frozenset)):
            items = sorted(item, key=repr) if isinstance(item, (set, frozenset)) else item
            listed: list[Any] = [None] * len(items)
            target[slot] = listed
            for index in range(len(items) - 1, -1, -1):
                pending.append((listed, index, items[index]))
        elif isinstance(item, Path):
            target[slot] = str(item)
        else:
            scalar = getattr(item, "item", None)  # numpy / torch scalars
            target[slot] = str(item)
            if callable(scalar) and getattr(item, "ndim", 1) == 0:
                try:
                    pending.append((target, slot, scalar()))
                except (TypeError, ValueError):
                    pass
    return root[0]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


def strict_loads(text: str) -> Any:
    """``json.loads`` that refuses NaN, Infinity and -Infinity (what every non-Python reader does)."""
    return json.loads(text, parse_constant=_reject_constant)


def dumps_strict(value: Any, indent: int | None = None) -> str:
    """Strict JSON text of ``value`` after ``to_strict_json`` (never a bare NaN token)."""
    return json.dumps(to_strict_json(value), indent=indent, ensure_ascii=False, allow_nan=False)


def strict_lines(records: Sequence[Any]) -> str:
    """One strict JSON line per record (``dumps_strict`` of each), the records converted in one pass."""
    converted = to_strict_json(list(records))
    return "".join([json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n" for record in converted])


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` whole or not at all (``write_bytes_atomically``)."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_error(path: Path, error: OSError) -> OSError:
    """``error`` as one line naming the file not written, and the fix."""
    reason = error.strerror or str(error)
    return OSError(error.errno, f"cannot write {path}: {reason}; free space (or fix the folder) and rerun")


def write_bytes_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` whole or not at all, through a temporary file of its own (removed
    whatever stops the write, SIGTERM included); a failed write raises an OSError naming it."""
    try:
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise write_error(target, error) from None
    temporary = Path(name)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        temporary.replace(target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise write_error(target, error) from None
        raise


# ---- provenance --------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def host_version() -> str | None:
    """The installed lmms-eval version, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lmms_eval")
    except PackageNotFoundError:
        return None


def model_args_text(model_args: Any) -> str:
    """The ``--model_args`` string as the host received it ("" when absent; a dict as ``k=v,...``)."""
    if model_args is None:
        return ""
    if isinstance(model_args, Mapping):
        return ",".join(f"{key}={value}" for key, value in model_args.items())
    return str(model_args)


def redact_arguments(text: str) -> str:
    """``key=value`` pairs whose key looks secret (key, token, password...) and key-like strings redacted."""

    def redact_pair(part: str) -> str:
        key, equals, _ = part.partition("=")
        return f"{key}={REDACTED}" if equals and _SECRET_KEY.search(key.strip().lstrip("-")) else part

    return scrub(",".join([redact_pair(part) for part in text.split(",")]))


def redact_command_line(argv: Sequence[str]) -> list[str]:
    """The command line with secret-looking ``key=value`` values and tokens redacted."""
    redacted: list[str] = []
    previous = ""
    for argument in argv:
        argument = str(argument)
        if previous and _SECRET_KEY.search(previous.lstrip("-")) and not argument.startswith("-"):
            redacted.append(REDACTED)  # `--api_key VALUE`
        else:
            redacted.append(redact_arguments(argument))
        previous = argument if argument.startswith("--") and "=" not in argument else ""
    return redacted


def host_seeds(args: Any) -> dict[str, int | None] | None:
    """The run's ``--seed`` values by name (python random, numpy, torch, fewshot), None without args."""
    seed = getattr(args, "seed", None) if args is not None else None
    if seed is None:
        return None
    if isinstance(seed, str):
        seed = [None if part.strip() == "None" else part.strip() for part in seed.split(",")]
    if not isinstance(seed, (list, tuple)):
        seed = [seed] * len(HOST_SEED_NAMES)
    if len(seed) == 1:
        seed = list(seed) * len(HOST_SEED_NAMES)
    values: dict[str, int | None] = {}
    for name, value in zip(HOST_SEED_NAMES, seed, strict=False):
        try:
            values[name] = None if value is None else int(value)
        except (TypeError, ValueError):
            values[name] = None
    return values


def model_folder_name(model_args: Any) -> str:
    """The host's per-model folder name (``model_name_sanitized``), from ``pretrained=``/``model=``/... in
    the model args, not ``--model``: "" for ``--model random_guess --model_args seed=0``."""
    text = model_args_text(model_args)
    try:
        from lmms_eval.loggers.evaluation_tracker import GeneralConfigTracker
        from lmms_eval.utils import sanitize_model_name

        return sanitize_model_name(GeneralConfigTracker._get_model_name(text))
    except (ImportError, AttributeError, IndexError):  # another host version: no per-model folder
        return ""


def judge_deviation(paper: str | None, judge: Mapping[str, Any] | None) -> str | None:
    """The deviation line when ``judge`` is not the paper's judge model ``paper``; None when it is (or a
    dated snapshot of it such as gpt-4-0613), or nothing was judged."""
    model = None if not judge else judge.get("model")
    if not paper or not model or re.fullmatch(re.escape(paper) + r"(-\d{4})?", str(model)):
        return None
    if judge.get("kind") == "rule":  # the wording the report page uses for a rule judge
        return (
            f"rule-based judge used where the paper uses a GPT-4 judge ({paper!r}): not comparable with "
            "published numbers"
        )
    return (
        f"judge model {model!r} instead of the paper's {paper!r} (its official code's judge): judged numbers "
        f"are not directly comparable with published ones; set the judge model to {paper} to follow the paper"
    )


def recorded_limit(args: Any) -> Any:
    """The ``--limit`` a report records: None for a full run (no limit, or the host's ``-1``)."""
    limit = getattr(args, "limit", None) if args is not None else None
    if limit is None:
        return None
    try:
        return None if float(limit) == -1 else limit
    except (TypeError, ValueError):
        return limit


def provenance(
    args: Any,
    task: str,
    *,
    settings: Mapping[str, Any] | None = None,
    judge: Mapping[str, Any] | None = None,
    corruption: Mapping[str, Any] | None = None,
    pack_seeds: Mapping[str, Any] | None = None,
    deviations: Sequence[str] = (),
) -> dict[str, Any]:
    """The provenance block: who produced these numbers, with what, and how (secrets redacted); its run id
    is set where the report is written."""
    model_args = model_args_text(getattr(args, "model_args", None)) if args is not None else ""
    limit = recorded_limit(args)  # null for a full run, the host's -1 included
    deviations = list(deviations)  # the task pipeline gives the run's arguments' first (run_deviations)
    if limit is not None and not any(str(item).startswith("--limit") for item in deviations):
        deviations.insert(0, f"--limit {limit}: only part of each task's documents were evaluated")
    model = getattr(args, "model", None) if args is not None else None
    substituted = substitution.active()  # `--model llava` served by the pack's LLaVA (docs/models.md)
    if substituted is not None and model is not None and str(model) != substituted["asked"]:
        substituted = None  # another run of the same process (a --config list): not this report's model
    if substituted is not None:
        deviations.append(substitution.deviation(substituted))
    return {
        "pack_version": __version__,
        "host_version": host_version(),
        "model": None if model is None else str(model),
        "model_args": redact_arguments(model_args) if model_args else None,
        "task": task,
        "run_id": None,
        "timestamp": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command_line": redact_command_line(sys.argv) if args is not None else None,
        "seeds": {"host": host_seeds(args), "pack": dict(pack_seeds or {})},
        "settings": dict(settings or {}),
        "judge": None if judge is None else json.loads(scrub(json.dumps(to_strict_json(judge)))),
        "corruption": None if corruption is None else dict(corruption),
        "limit": limit,
        "deviations": deviations,
        "model_substitution": substituted,  # optional key: reports from older packs lack it
        "host_patches": patch_record.patches(),  # optional key: applied / not needed / skipped (why)
        "datasets": datasets_read_of(task),
    }


def datasets_read_of(task: str) -> list[dict[str, Any]]:
    """Every dataset ``task`` (or a group's members) read in this run: id, config, split, revision; a URL
    keeps neither user info nor query (``https://user:token@host/x?sig=...``), known secrets are scrubbed."""

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return scrub(safe_url(value) if "://" in value else value) or value
        if isinstance(value, Mapping):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(item) for item in value]
        return value

    return [clean(entry) for entry in datasets_read(task)]


# ---- building and validating -------------------------------------------------------------------------


def build_report(
    *,
    benchmark: str,
    task: str,
    metrics: Mapping[str, Any],
    args: Any = None,
    details: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    judge: Mapping[str, Any] | None = None,
    corruption: Mapping[str, Any] | None = None,
    pack_seeds: Mapping[str, Any] | None = None,
    deviations: Sequence[str] = (),
    warnings: Sequence[str] = (),
    paper_judge_model: str | None = None,
) -> dict[str, Any]:
    """The strict-JSON report of one task or group: flat ``metrics``, benchmark-specific ``details``,
    provenance from ``args`` (the host's CLI namespace or None); validated where it is written."""
    for name, value in metrics.items():
        if isinstance(value, (Mapping, list, tuple, set)):
            kind = type(value).__name__
            raise ReportError(f"report.metrics.{name}: metrics are flat; put a {kind} in details")
    deviations = list(deviations)
    line = judge_deviation(paper_judge_model, judge)
    if line is not None and not any("judge instead of the paper" in item for item in deviations):
        deviations.append(line)  # unless the scorer names the judge it used already
    report = {
        "schema_version": SCHEMA_VERSION,
        "benchmark": benchmark,
        "task": task,
        "metrics": dict(metrics),
        "details": dict(details or {}),
        "provenance": provenance(
            args,
            task,
            settings=settings,
            judge=judge,
            corruption=corruption,
            pack_seeds=pack_seeds,
            deviations=deviations,
        ),
        "warnings": [str(warning) for warning in warnings],
    }
    return to_strict_json(report)  # one pass; validated once, where it is written (write_report_files)


def _expect(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise ReportError(f"{where}: {message}")


def _is_scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (bool, int, str))


def _optional(value: Any, kinds: tuple[type, ...]) -> bool:
    return value is None or isinstance(value, kinds)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def validate_report(report: Any) -> None:
    """Raise ``ReportError`` naming the first field of ``report`` that breaks schema version 1."""
    _expect(isinstance(report, dict), "report", f"expected an object, got {type(report).__name__}")
    version = report.get("schema_version")
    _expect(
        version == SCHEMA_VERSION and not isinstance(version, bool),
        "report.schema_version",
        f"expected {SCHEMA_VERSION}, got {version!r}",
    )
    missing = [key for key in TOP_LEVEL_KEYS if key not in report]
    _expect(not missing, "report", f"missing field(s) {missing}")
    unknown = sorted(set(report) - set(TOP_LEVEL_KEYS))
    _expect(not unknown, "report", f"unknown field(s) {unknown}")
    for key in ("benchmark", "task"):
        value = report[key]
        _expect(isinstance(value, str) and value != "", f"report.{key}", "expected a non-empty string")
    metrics = report["metrics"]
    _expect(isinstance(metrics, dict), "report.metrics", "expected an object")
    for name, value in metrics.items():
        message = f"expected a finite number, bool, string or null, got {value!r:.60}"
        _expect(_is_scalar(value), f"report.metrics.{name}", message)
    _expect(isinstance(report["details"], dict), "report.details", "expected an object")
    _expect(_strings(report["warnings"]), "report.warnings", "expected a list of strings")
    _validate_provenance(report["provenance"], report["task"])
    try:
        json.dumps(report, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ReportError(f"report: not strict JSON ({error})") from error


_OPTIONAL_STRINGS = ("host_version", "model", "model_args", "run_id")


def _validate_provenance(block: Any, task: str) -> None:
    where = "report.provenance"
    _expect(isinstance(block, dict), where, "expected an object")
    missing = [key for key in PROVENANCE_KEYS if key not in block]
    _expect(not missing, where, f"missing field(s) {missing}")
    seeds, judge, limit, stamp = block["seeds"], block["judge"], block["limit"], block["timestamp"]
    host, pack = (seeds.get("host"), seeds.get("pack")) if isinstance(seeds, dict) else (None, None)
    read = block.get("datasets", [])  # absent in reports written before pack 0.1.0 recorded it
    substituted = block.get("model_substitution")
    checks = [  # (field, whether it holds, what it expects), in this order
        ("pack_version", isinstance(block["pack_version"], str), "expected a string"),
        *[(key, _optional(block[key], (str,)), "expected a string or null") for key in _OPTIONAL_STRINGS],
        ("task", block["task"] == task, f"expected {task!r} (the report task), got {block['task']!r}"),
        (
            "timestamp",
            isinstance(stamp, str) and bool(_TIMESTAMP.match(stamp)),
            f"expected UTC 'YYYY-MM-DDTHH:MM:SSZ', got {stamp!r}",
        ),
        (
            "command_line",
            block["command_line"] is None or _strings(block["command_line"]),
            "expected a list of strings or null",
        ),
        ("seeds", isinstance(seeds, dict) and set(seeds) == {"host", "pack"}, "expected {host, pack}"),
        (
            "seeds.host",
            host is None or _named_seeds(host),
            f"expected null or integers/nulls named {list(HOST_SEED_NAMES)}",
        ),
        ("seeds.pack", isinstance(pack, dict), "expected an object"),
        ("settings", isinstance(block["settings"], dict), "expected an object"),
        (
            "datasets",
            isinstance(read, list) and all(_dataset_entry(item) for item in read),
            "expected a list of {id, config, split, revision} objects",
        ),
        (
            "judge",
            judge is None or (isinstance(judge, dict) and isinstance(judge.get("kind"), str)),
            "expected null or an object with a string 'kind'",
        ),
        ("corruption", _optional(block["corruption"], (dict,)), "expected an object or null"),
        (
            "limit",
            limit is None or (isinstance(limit, (int, float)) and not isinstance(limit, bool)),
            "expected a number or null",
        ),
        (
            "model_substitution",
            substituted is None
            or (isinstance(substituted, dict) and {"asked", "used", "checkpoint"} <= set(substituted)),
            "expected null or an object with asked, used, checkpoint",
        ),
        ("deviations", _strings(block["deviations"]), "expected a list of strings"),
    ]
    for key, holds, message in checks:
        _expect(holds, f"{where}.{key}", message)


def _named_seeds(host: Any) -> bool:
    """Host seeds as recorded: integers or nulls named after ``HOST_SEED_NAMES``."""
    named = isinstance(host, dict) and set(host) <= set(HOST_SEED_NAMES)
    return named and all(_optional(value, (int,)) for value in host.values())


def _dataset_entry(item: Any) -> bool:
    return isinstance(item, dict) and set(DATASET_READ_KEYS) <= set(item)


def read_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Load a report file with a strict JSON parser and validate it; errors name the file."""
    path = Path(path)
    try:
        report = strict_loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ReportError(f"{path}: not a readable strict-JSON report ({error})") from error
    try:
        validate_report(report)
    except ReportError as error:
        raise ReportError(f"{path}: {error}") from error
    return report


# ---- where files go ----------------------------------------------------------------------------------

_claims_lock = threading.RLock()  # re-entered: run_dir holds it while _claim_new_folder records
# outside a host evaluation: (model folder, model, model args) -> the folder claimed for them
_claims: dict[tuple, Path] = {}
# every run folder this process created, host runs' too (the launcher names them after the run's end)
_claimed_folders: list[Path] = []


def model_dir(args: Any) -> Path | None:
    """``<output_path>/<model_name_sanitized>/lmms_eval_tasks``: the pack's folder for this run's model,
    or None when the run has no output path (Python API)."""
    output = getattr(args, "output_path", None) if args is not None else None
    if not output:
        return None
    folder = Path(output)
    name = model_folder_name(getattr(args, "model_args", None))
    if name:
        folder = folder / name
    return folder / PACK_FOLDER


def run_dir(args: Any, state: Any = None) -> Path | None:
    """This run's own folder ``<model_dir>/<run_id>`` (the host's date id from ``state``, else the UTC time;
    ``-2``, ``-3``... when taken), created on first use and never reused by another run."""
    base = model_dir(args)
    if base is None:
        return None
    if state is not None and state.host:
        return state.claim_folder(lambda: _claim_new_folder(base, state.run_id))
    # hooks called outside a host evaluation (tests, scripts): one folder per model setup and process
    key = (str(base), getattr(args, "model", None), model_args_text(getattr(args, "model_args", None)))
    with _claims_lock:
        claimed = _claims.get(key)
        if claimed is not None and claimed.is_dir():
            return claimed
        folder = _claim_new_folder(base, None)
        _claims[key] = folder
        return folder


def _claim_new_folder(base: Path, run_id: str | None) -> Path:
    """A new folder ``<base>/<run_id or UTC time>[-N]`` that no other run has."""
    stem = run_id or datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
    base.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 1000):
        folder = base / (stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        with _claims_lock:
            _claimed_folders.append(folder)
        return folder
    raise OSError(f"cannot claim a run folder under {base}")


def claimed_run_dirs() -> list[Path]:
    """The run folders this process has written into (the launcher names them when the host's save fails)."""
    with _claims_lock:
        return list(_claimed_folders)


def _index_entry(folder: Path, provenance: Mapping[str, Any], files: dict[str, Path]) -> dict[str, Any]:
    """A ``latest.json`` entry: the run folder, the run's time and model, its files relative to the index."""
    return {
        "run_id": folder.name,
        **{key: provenance.get(key) for key in ("timestamp", "model", "model_args")},
        **{name: path.relative_to(folder.parent).as_posix() for name, path in files.items()},
    }


def _update_latest(folder: Path, report: dict[str, Any], files: dict[str, Path]) -> None:
    """Point ``<model_dir>/latest.json`` at this task's newly written files (under a file lock)."""
    index_path = folder.parent / LATEST_INDEX
    lock_path = folder.parent / ".latest.lock"
    entry = _index_entry(folder, report["provenance"], files)
    with open(lock_path, "a+", encoding="utf-8") as lock:
        try:
            import fcntl

            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        except ImportError:  # not POSIX: best effort
            pass
        try:
            index = _read_index(index_path)
        except FileNotFoundError:
            index = {"schema_version": SCHEMA_VERSION, "tasks": {}}
        except (OSError, UnicodeDecodeError, ValueError) as error:  # damaged: kept aside, rebuilt
            index = _rebuilt_latest(index_path, error)
        previous = index["tasks"].get(report["task"])
        if isinstance(previous, dict) and run_is_older(folder.name, str(previous.get("run_id", ""))):
            return  # latest.json only moves forward: completing an older run later leaves it as it is
        index["tasks"][report["task"]] = entry
        index["tasks"] = dict(sorted(index["tasks"].items()))
        write_atomically(index_path, dumps_strict(index, indent=2) + "\n")


def _read_index(index_path: Path) -> dict[str, Any]:
    """``latest.json``, parsed; ValueError when it is not an index of tasks each naming its report file."""
    index = strict_loads(index_path.read_text(encoding="utf-8"))
    if not isinstance(index, dict) or not isinstance(index.get("tasks"), dict):
        raise ValueError("not an index of tasks")
    for task, entry in index["tasks"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("report"), str):
            raise ValueError(f"entry {task!r} names no report file")
    return index


def _newest_reports(pack_folder: Path) -> dict[str, dict[str, Any]]:
    """Each task's newest report among ``pack_folder``'s run folders (by timestamp, then run id), as
    ``latest.json`` entries: what a damaged index is rebuilt from."""
    newest: dict[str, dict[str, Any]] = {}
    for report_path in sorted(pack_folder.glob(f"*/*{REPORT_SUFFIX}")):
        found = _latest_entry(report_path)
        if found is None:
            continue
        task, entry = found
        order = (str(entry.get("timestamp") or ""), entry["run_id"])
        kept = newest.get(task)
        if kept is None or order >= (str(kept.get("timestamp") or ""), kept["run_id"]):
            newest[task] = entry
    return newest


def _latest_entry(report_path: Path) -> tuple[str, dict[str, Any]] | None:
    """(task, latest.json entry) of one report file of a run folder, or None when it is not a report."""
    try:
        report = strict_loads(report_path.read_text(encoding="utf-8"))
        task, block = report["task"], dict(report["provenance"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(task, str) or not report_path.name == f"{task}{REPORT_SUFFIX}":
        return None
    files = {"report": report_path, "samples": report_path.parent / f"{task}{SAMPLES_SUFFIX}"}
    present = {name: path for name, path in files.items() if path.is_file()}
    return task, _index_entry(report_path.parent, block, present)


def _rebuilt_latest(index_path: Path, error: BaseException) -> dict[str, Any]:
    """A damaged ``latest.json`` moved aside (``latest.json.damaged-<UTC time>``) and rebuilt from the run
    folders' reports (each task's newest by timestamp, then run id), with one warning."""
    pack_folder = index_path.parent
    moment = datetime.now(UTC).strftime("%Y%m%d_%H%M%S_%f")
    aside: Path | None = index_path.with_name(f"{index_path.name}.damaged-{moment}")
    try:
        index_path.replace(aside)  # type: ignore[arg-type]
    except OSError:
        aside = None
    newest = _newest_reports(pack_folder)
    kept_as = f"kept as {aside.name}" if aside is not None else "could not be moved aside"
    runs = len({entry["run_id"] for entry in newest.values()})
    logger.warning(
        f"{index_path}: damaged ({type(error).__name__}: {error}); {kept_as}, rebuilt from the reports of "
        f"{runs} run folders ({len(newest)} tasks)"
    )
    return {"schema_version": SCHEMA_VERSION, "tasks": newest}


def run_is_older(run_id: str, than: str) -> bool:
    """True when both are the host's date-id run folders (``20261201_230501[-N]``) and ``run_id`` is older."""
    pattern = re.compile(r"^(\d{8}_\d{6})(?:-(\d+))?$")
    first, second = pattern.match(run_id), pattern.match(than)
    if first is None or second is None:
        return False
    return (first.group(1), int(first.group(2) or 1)) < (second.group(1), int(second.group(2) or 1))


def write_report_files(
    folder: Path, report: dict[str, Any], samples: Sequence[Mapping[str, Any]] | None = None
) -> Path:
    """Validate ``report`` and write ``<task>_report.json`` (and ``<task>_samples.jsonl``) into ``folder``,
    each atomically and as strict JSON, then record them in ``latest.json``. Returns the report's path."""
    validate_report(report)
    task = report["task"]
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    if samples is not None:
        samples_path = folder / f"{task}{SAMPLES_SUFFIX}"
        write_atomically(samples_path, strict_lines(samples))
        files["samples"] = samples_path
    report_path = folder / f"{task}{REPORT_SUFFIX}"
    write_atomically(report_path, dumps_strict(report, indent=2) + "\n")
    files["report"] = report_path
    _update_latest(folder, report, files)
    return report_path


def iter_report_paths(output_path: str | os.PathLike[str]) -> Iterator[Path]:
    """Every pack report file under ``output_path`` (all models, all runs), sorted."""
    yield from sorted(Path(output_path).rglob(f"{PACK_FOLDER}/*/*{REPORT_SUFFIX}"))


def _latest_in(base: Path, task: str) -> dict[str, Path]:
    """``task``'s files listed in ``base/latest.json``, or {}; past a damaged index or a deleted run folder,
    with one warning, the task's newest report among the run folders."""
    index_path = base / LATEST_INDEX
    try:
        index = _read_index(index_path)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as error:
        error_text = f"{type(error).__name__}: {error}"
        logger.warning(f"{index_path}: damaged ({error_text}); read past it: the newest report of each task")
        entry = _newest_reports(base).get(task)
    else:
        entry = index["tasks"].get(task)
        if isinstance(entry, dict) and not (base / entry["report"]).is_file():  # its run folder was deleted
            entry = _newest_reports(base).get(task)
            found = f"the newest left is in {entry['run_id']}" if entry else "no other report of it is left"
            logger.warning(
                f"{index_path}: {task}'s entry names {base / index['tasks'][task]['report']}, which no "
                f"longer exists; {found}"
            )
    if not isinstance(entry, dict):
        return {}
    return {name: base / entry[name] for name in ("report", "samples") if isinstance(entry.get(name), str)}


def latest_files(output_path: str | os.PathLike[str], task: str, model_folder: str = "") -> dict[str, Path]:
    """The files of ``task``'s latest complete report for one model folder (``""``: models without a
    name, e.g. ``random_guess``), from ``latest.json``: ``{"report": path, "samples": path}``, or {}."""
    return _latest_in(Path(output_path) / model_folder / PACK_FOLDER, task)


def latest_report_path(output_path: str | os.PathLike[str], task: str, model_folder: str = "") -> Path | None:
    """The latest complete report of ``task`` for one model folder, or None."""
    return latest_files(output_path, task, model_folder).get("report")


def task_files(path: str | os.PathLike[str], task: str) -> dict[str, Path]:
    """``task``'s report and samples files under ``path``, whichever folder a user names: an output path
    or a host model folder (its latest complete run), a ``lmms_eval_tasks`` folder, or one run folder."""
    path = Path(path)
    for base in (path / PACK_FOLDER, path):
        files = _latest_in(base, task)
        if files:
            return files
    candidates = {"report": path / f"{task}{REPORT_SUFFIX}", "samples": path / f"{task}{SAMPLES_SUFFIX}"}
    return {name: candidate for name, candidate in candidates.items() if candidate.is_file()}
