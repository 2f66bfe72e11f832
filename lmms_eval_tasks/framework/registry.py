"""The one registry of benchmarks, found by folder or the entry point group ``lmms_eval_tasks.benchmarks``:
``BENCHMARK`` (identity, metadata; light) in ``tasks/<name>/__init__.py``; ``BEHAVIOUR`` imported on use."""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import pkgutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lmms_eval_tasks.framework.input_checks import OptionError
from lmms_eval_tasks.reporting.sections import DEFAULT_COUNT_KEYS

if TYPE_CHECKING:
    from lmms_eval_tasks.framework.records import RecordSchema

MAX_HEADLINE_METRICS = 8
ENTRY_POINT_GROUP = "lmms_eval_tasks.benchmarks"


class UnknownOption(OptionError, TypeError):
    """An option name the scorer does not have: one line, and a TypeError as Python's own for a keyword."""


class Scorer:
    """A scorer with options declared once as a frozen dataclass (``@scorer(Options)``): a call checks options
    and records (one-line errors); ``checked`` is the body, for callers that checked both."""

    def __init__(self, body: Callable[..., Any], options: type | None, record_schema: Any = None) -> None:
        self.options = options
        self.record_schema = record_schema
        self.checked = body if options is not None else lambda records, _options: body(records)
        functools.update_wrapper(self, body)

    def check(self, **raw: Any) -> Any:
        """The options object of ``raw`` option values (None for a scorer without options)."""
        known = [item.name for item in dataclasses.fields(self.options)] if self.options is not None else []
        unknown = sorted(set(raw) - set(known))
        if unknown:
            listed = ", ".join(known) or "none"
            raise UnknownOption(f"bad option {unknown[0]!r}: not an option of this scorer ({listed})")
        return self.options(**raw) if self.options is not None else None

    def __call__(self, records: Any, **options: Any) -> Any:
        checked = self.check(**options)
        if self.record_schema is not None:
            from lmms_eval_tasks.framework.records import validate_records

            records = list(records)
            validate_records(self.record_schema, records)
        return self.checked(records, checked)


def scorer(options: type | None = None, record_schema: Any = None) -> Callable[[Callable[..., Any]], Scorer]:
    """Decorate ``score(records, options)`` (or ``score(records)``) into a ``Scorer``; with ``record_schema``
    the public call validates the records too (VRB: a misspelt corruption would drop cells silently)."""
    if options is not None and not dataclasses.is_dataclass(options):
        raise TypeError(f"@scorer: {options!r} is not a dataclass of options")
    return lambda body: Scorer(body, options, record_schema)


def derived(options: Any, **changes: Any) -> Any:
    """A copy of a checked options object with ``changes`` the scorer itself makes (``compare`` scores without
    the diagnosis): values of the code's own, so not checked again."""
    changed = copy.copy(options)
    for name, value in changes.items():
        object.__setattr__(changed, name, value)
    return changed


@dataclass(frozen=True)
class Behaviour:
    """What a benchmark does, as direct references (``tasks/<name>/behaviour.py``): scorer, per-question
    correctness, parsers, report section, generated files, screening, options, judge_needed, launch_check."""

    score: Scorer
    options: type | None = None
    per_question: Scorer | None = None
    parsers: Sequence[Any] = ()
    random_answer: Callable[..., str] | None = None
    report_section: Callable[..., Any] | None = None
    generated_files: Callable[[], dict[str, Any]] | None = None
    screening: Any = None
    task_options: Callable[[str], dict[str, Any]] | None = None
    judge_needed: Callable[[str], str | None] | None = None
    launch_check: Callable[[], str | None] | None = None
    hooks: Any = None  # its hook_factory.TaskHooks (not imported here: that module reads the registry)

    def __post_init__(self) -> None:
        if not isinstance(self.score, Scorer):
            raise TypeError(f"Behaviour.score must be decorated with @scorer, got {self.score!r}")
        if self.options is None:
            object.__setattr__(self, "options", self.score.options)
        elif self.options is not self.score.options:
            raise TypeError(f"Behaviour.options {self.options!r} is not the scorer's {self.score.options!r}")


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's identity and metadata (``behaviour``: the rest); ``count_keys`` change a headline
    number when not zero; ``paper_judge_model`` is the paper's judge (another one is a deviation)."""

    name: str
    title: str
    description: str
    record_schema: RecordSchema
    headline_metrics: tuple[str, ...]
    behaviour: str | Behaviour
    row_schema: Any = None  # a dataset_contract.RowSchema (not imported here: that module reads the registry)
    sample_tasks: tuple[str, ...] = ()
    group_metrics: tuple[str, ...] = ()
    docs: str = ""
    paper_judge_model: str | None = None
    count_keys: tuple[str, ...] = DEFAULT_COUNT_KEYS
    leaderboard_files: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"benchmark name {self.name!r} must be a lower-case identifier")
        if not 1 <= len(self.headline_metrics) <= MAX_HEADLINE_METRICS:
            raise ValueError(
                f"benchmark {self.name!r}: {len(self.headline_metrics)} headline metrics "
                f"(1 to {MAX_HEADLINE_METRICS} allowed)"
            )

    @property
    def loaded(self) -> Behaviour:
        """The ``Behaviour`` named by ``behaviour``, imported once (thread-safe)."""
        if isinstance(self.behaviour, Behaviour):
            return self.behaviour
        with _lock:
            found = _behaviours.get(self.behaviour)
            if found is None:
                found = getattr(importlib.import_module(self.behaviour), "BEHAVIOUR", None)
                if not isinstance(found, Behaviour):
                    raise TypeError(f"{self.behaviour}.BEHAVIOUR is not a Behaviour: {found!r}")
                _behaviours[self.behaviour] = found
            return found

    def own_module(self, name: str) -> Any | None:
        """The module ``name`` (``rejudge``, ``published``) beside the benchmark's ``behaviour`` (an installed
        benchmark's too); None when there is none (a module that it imports and is missing raises)."""
        package = self.behaviour if isinstance(self.behaviour, str) else self.loaded.score.__module__
        module = f"{package.rpartition('.')[0]}.{name}"
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
            return None

    def owns_task(self, task_name: str) -> bool:
        """True when ``task_name`` starts with this benchmark's name (``dare`` owns ``dare_*``)."""
        return task_name.startswith(self.name)

    def validate(self, records: list[dict[str, Any]], **kwargs: Any) -> None:
        """Check ``records`` against the record contract (``records.validate_records``; RecordError)."""
        from lmms_eval_tasks.framework.records import validate_records

        validate_records(self.record_schema, records, **kwargs)

    def check_options(self, **options: Any) -> Any:
        """The scorer's options object for these values: the one check (``OptionError``), before any record
        is read, so a bad option is reported as such even when the records are bad too."""
        return self.loaded.score.check(**options)

    def score(self, records: list[dict[str, Any]], **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, details)`` of records already checked with ``validate``, options checked here."""
        return self.score_with(records, self.check_options(**options))

    def score_with(
        self, records: list[dict[str, Any]], options: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, details)`` for options from ``check_options``: the scorer's body, then ``screen``."""
        metrics, details = self.loaded.score.checked(records, options)
        return self.screen(records, metrics, details, options)

    def screen(
        self, records: list[dict[str, Any]], metrics: dict[str, Any], details: dict[str, Any], options: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, details)`` with grader-playing outputs counted and warned about; a constant answer
        is compared with its own baseline (rule-scored benchmarks only: no judge calls spent)."""
        from lmms_eval_tasks.framework.screening import attach_screening

        def baseline(same: list[dict[str, Any]]) -> dict[str, Any]:
            scored = self.loaded.score.checked(same, options)[0]
            return {name: scored.get(name) for name in self.headline_metrics[:1]}

        rule_scored = self.paper_judge_model is None
        screening = self.loaded.screening
        return attach_screening(screening, records, metrics, details, baseline if rule_scored else None)

    def table_keys(self, keys: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """``keys`` plus the screening count where the benchmark screens (``with_screened_column``)."""
        if self.loaded.screening is None:
            return tuple(keys)
        from lmms_eval_tasks.framework.screening import with_screened_column

        return with_screened_column(keys, self.count_keys)

    def task_options(self, task: str) -> dict[str, Any]:
        """The scoring options of ``task`` from the benchmark's config ({} without one)."""
        task_options = self.loaded.task_options
        return dict(task_options(task)) if task_options is not None else {}


_lock = threading.RLock()
_behaviours: dict[str, Behaviour] = {}
_discovered: dict[str, Benchmark] | None = None
_registered: dict[str, Benchmark] = {}


def _discover() -> dict[str, Benchmark]:
    """Every ``BENCHMARK`` of a package in the tasks folder, then of the installed entry points."""
    from importlib.metadata import entry_points

    from lmms_eval_tasks import TASKS_DIR, TASKS_PACKAGE

    modules = [
        f"{TASKS_PACKAGE}.{info.name}"
        for info in sorted(pkgutil.iter_modules([str(TASKS_DIR)]), key=lambda info: info.name)
        if info.ispkg
    ]
    modules += [point.value for point in entry_points(group=ENTRY_POINT_GROUP)]
    found: dict[str, Benchmark] = {}
    for name in modules:
        module = importlib.import_module(name)
        benchmark = getattr(module, "BENCHMARK", None)
        if benchmark is None:
            continue
        if not isinstance(benchmark, Benchmark):
            raise TypeError(f"{module.__name__}.BENCHMARK is a {type(benchmark).__name__}, not a Benchmark")
        if benchmark.name in found:
            raise ValueError(f"two packages define benchmark {benchmark.name!r}")
        found[benchmark.name] = benchmark
    return found


@functools.cache
def installed_task_folders() -> tuple[str, ...]:
    """The folders of the installed benchmark packages, whose task YAML the launcher's task index reads
    (found without importing them; read once per process, ~30 ms)."""
    from importlib.metadata import entry_points
    from importlib.util import find_spec

    specs = [find_spec(point.module) for point in entry_points(group=ENTRY_POINT_GROUP)]
    packages = [spec.submodule_search_locations for spec in specs if spec and spec.submodule_search_locations]
    return tuple(locations[0] for locations in packages)


def register(benchmark: Benchmark) -> None:
    """Add a benchmark defined outside ``lmms_eval_tasks.tasks`` (tests, third-party packs)."""
    with _lock:
        _registered[benchmark.name] = benchmark


def unregister(name: str) -> None:
    """Remove a benchmark added with ``register`` (no-op for unknown names)."""
    with _lock:
        _registered.pop(name, None)


def benchmarks() -> dict[str, Benchmark]:
    """Every benchmark: the pack's packages (discovered once), then registered ones; by name."""
    global _discovered
    with _lock:
        if _discovered is None:
            _discovered = _discover()
        return {**_discovered, **_registered}


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called ``name``, or a KeyError listing the known ones."""
    every = benchmarks()
    if name not in every:
        raise KeyError(f"unknown benchmark {name!r}; known benchmarks: {', '.join(sorted(every))}")
    return every[name]


def benchmark_for_task(task_name: str) -> Benchmark | None:
    """The benchmark owning ``task_name`` (the longest benchmark name it starts with), or None."""
    owners = [benchmark for benchmark in benchmarks().values() if benchmark.owns_task(task_name)]
    return max(owners, key=lambda benchmark: len(benchmark.name), default=None)


def schema_of(benchmark: str) -> RecordSchema:
    """The record schema of the registered ``benchmark`` (KeyError listing the known ones)."""
    return get_benchmark(benchmark).record_schema
