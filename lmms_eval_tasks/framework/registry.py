"""What a benchmark is, and the one registry of every benchmark the pack ships.

Each benchmark package ``lmms_eval_tasks/tasks/<name>/`` defines ``BENCHMARK = Benchmark(...)`` in its
``__init__.py`` (strings only, so discovery imports nothing heavy). The ``score``/``compare`` CLI, the demo,
the ``random_guess`` baseline, ``make generate``, the report and the tests all iterate this registry:
adding a benchmark is adding one package, with no central list to edit.

Callables are named as ``"module:function"`` strings and imported only when used (``resolve``).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lmms_eval_tasks.framework.targets import resolve

if TYPE_CHECKING:
    from lmms_eval_tasks.framework.records import RecordSchema

MAX_HEADLINE_METRICS = 8
# Counts that change a headline number when not zero; a benchmark declares its own in ``count_keys``.
DEFAULT_COUNT_KEYS: tuple[str, ...] = ("unparsed", "unjudged", "empty_predictions", "no_verdict")


@dataclass(frozen=True)
class Benchmark:
    """One benchmark as the pack's tools see it.

    - ``name``: the ``score``/``compare`` name and the default task-name prefix (``dare`` owns ``dare_*``).
    - ``scorer``: ``score(records, **options) -> (metrics, details)``, the first function of the
      benchmark's harness-free ``scoring.py``: the one scoring path (a run, ``score``, ``compare``, the
      demo). Its headline numbers are ``details["resampling"].estimate()`` or checked against it (the
      ``lmms_eval_tasks.uncertainty.Resampling`` their standard errors resample, with its unit).
    - ``checked_scorer``: the same scorer's body for options already checked by ``option_check``
      (``score_checked``, right below ``score``): the run's pipeline and ``lmms-eval-tasks score`` check
      the options once, then call it (``Benchmark.score_checked``), so no option is checked twice. None:
      ``scorer`` is called (its options then checked by the scorer too).
    - ``record_schema``: the record contract (``framework.records.RecordSchema``): fields, kinds, allowed
      values, what identifies a record, a minimal valid example; enforced by ``score``, ``compare`` and the
      hooks before the scorer runs.
    - ``row_schema``: the dataset contract (``framework.dataset_contract.RowSchema``): the columns its hooks
      read from a dataset row, their kinds, how its images load; enforced when a task's docs are prepared.
    - ``option_check``: ``check_options(**options) -> None`` raising a one-line ``OptionError`` (a
      ``ValueError``) for a bad scorer option value; ``score`` and ``compare`` call it before reading any
      record, so a bad ``-o`` exits 2 whatever the records hold. None when the scorer takes no options.
    - ``parsers``: ``"module:attr"`` naming this benchmark's list of ``parser_index.ParserEntry`` (every
      parser of untrusted text it has), collected by ``parser_index.all_parsers``; None when it has none.
    - ``options``: ``score_options(task) -> dict``, the benchmark's config function, the only reader of
      its scoring environment variables (None: no options); the hook runtime passes its result to
      ``score`` and records it in the report (``provenance.settings.score_options``).
    - ``headline_metrics``: at most eight metric keys, the ones listed in task YAML and shown by the demo;
      the full breakdown stays in the pack's report and in ``score``.
    - ``per_question``: ``per_question_correct(records, **options) -> dict[question_id, bool]`` for
      ``compare`` (McNemar); None when the benchmark has no per-question correctness.
    - ``random_answer``: ``random_answer(task_name, doc, rng) -> str`` for the ``random_guess`` baseline.
    - ``sample_tasks``: tasks or groups on bundled data that ``make demo`` runs.
    - ``generated_files``: ``generated_files() -> dict[relative path, bytes]``: every file this benchmark
      generates (YAML, sample data), relative to the repository root; ``make generate`` writes them and a
      test fails when one drifts. Listed in the order they must be produced.
    - ``report_section``: renders the benchmark's section of ``lmms-eval-tasks report``.
    - ``group_metrics``: metrics defined only across a group's member tasks (VRB sub-metrics, DARE std
      over prompts): the host's table shows them on the groups, not as NaN on each member task.
    - ``docs``: the benchmark's page, relative to the repository root.
    - ``paper_judge_model``: the judge model of the paper and its official code (judged benchmarks); a
      report judged by any other model lists that under its provenance deviations.
    - ``judge_needed``: ``judge_needed(task) -> str | None``: None when ``task`` needs no LLM judge, else
      the task that runs the benchmark with the offline rule judge ("" when there is none); the launcher
      and ``score`` refuse such a task before any model loads when no judge endpoint is configured.
    - ``leaderboard_files``: the files a task writes for the benchmark's leaderboard or submission, relative
      to the run folder, ``{task}`` standing for the task (HallusionBench's
      ``{task}/HallusionBench_result.json``); ``lmms-eval-tasks export <benchmark>`` copies one. A scorer
      may name more in ``details["submission_files"]``.
    - ``launch_check``: ``check() -> str | None``, run by the launcher before a run of any of the
      benchmark's tasks: None when this machine is ready, else the one-line fix (TDIUC: WordNet).
    - ``count_keys``: counts a scorer reports (in its metrics, its details or ``details["counts"]``) that
      change a headline number when not zero (unparsed, unjudged, empty predictions, judge replies
      without a verdict); every non-zero one becomes a report warning (``count_warnings.count_warnings``).
    - ``screening``: ``"module:attr"`` naming its ``framework.screening.Screening`` (what outputs that play
      the grader look like for it); ``score`` counts them into the details and warnings and the metric
      ``screened_outputs``, which the host's table lists wherever a task lists a count column
      (``table_keys``).
    """

    name: str
    title: str
    description: str
    scorer: str
    record_schema: RecordSchema
    headline_metrics: tuple[str, ...]
    per_question: str | None = None
    random_answer: str | None = None
    sample_tasks: tuple[str, ...] = ()
    generated_files: tuple[str, ...] = ()
    report_section: str | None = None
    parsers: str | None = None
    option_check: str | None = None
    checked_scorer: str | None = None
    group_metrics: tuple[str, ...] = ()
    docs: str = ""
    paper_judge_model: str | None = None
    options: str | None = None
    count_keys: tuple[str, ...] = DEFAULT_COUNT_KEYS
    row_schema: Any = None  # a dataset_contract.RowSchema (not imported here: that module reads the registry)
    judge_needed: str | None = None
    screening: str | None = None
    leaderboard_files: tuple[str, ...] = ()
    launch_check: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"benchmark name {self.name!r} must be a lower-case identifier")
        if not 1 <= len(self.headline_metrics) <= MAX_HEADLINE_METRICS:
            raise ValueError(
                f"benchmark {self.name!r}: {len(self.headline_metrics)} headline metrics "
                f"(1 to {MAX_HEADLINE_METRICS} allowed)"
            )

    def owns_task(self, task_name: str) -> bool:
        """True when ``task_name`` starts with this benchmark's name (``dare`` owns ``dare_*``)."""
        return task_name.startswith(self.name)

    def validate(self, records: list[dict[str, Any]], **kwargs: Any) -> None:
        """Check ``records`` against the record contract (``records.validate_records``; RecordError)."""
        from lmms_eval_tasks.framework.records import validate_records

        validate_records(self.record_schema, records, **kwargs)

    def check_options(self, **options: Any) -> None:
        """Check scorer option values (``option_check``; OptionError/ValueError) before any record is read:
        options first, so a bad option is reported as such (exit 2) even when the records are bad too.
        Only the options the check declares are passed (names are checked against the scorer's signature
        by the caller, or by the scorer itself)."""
        if self.option_check is None:
            return
        import inspect

        check = resolve(self.option_check)
        parameters = inspect.signature(check).parameters
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            options = {key: value for key, value in options.items() if key in parameters}
        check(**options)

    def score(self, records: list[dict[str, Any]], **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, details)`` of records already checked with ``validate``: the benchmark's public
        ``score`` (which checks its options itself), the one scoring path, with the outputs that play
        the grader counted (``screen``)."""
        metrics, details = resolve(self.scorer)(records, **options)
        return self.screen(records, metrics, details, options)

    def score_checked(
        self, records: list[dict[str, Any]], **options: Any
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``score`` for a caller that has validated the records and checked these very options with
        ``check_options`` (the run's pipeline, ``lmms-eval-tasks score``): the scorer's body
        (``checked_scorer``), so each check happens once on that path."""
        metrics, details = resolve(self.checked_scorer or self.scorer)(records, **options)
        return self.screen(records, metrics, details, options)

    def screen(
        self, records: list[dict[str, Any]], metrics: dict[str, Any], details: dict[str, Any], options=()
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, details)`` with the outputs that play the grader counted and warned about
        (``framework.screening``; unchanged when the benchmark declares no ``screening``); a constant answer
        is compared with the headline metrics the same answer to every record gets (rule-scored only: a
        judged benchmark would spend judge calls)."""
        from lmms_eval_tasks.framework.screening import attach_screening

        def baseline(same: list[dict[str, Any]]) -> dict[str, Any]:
            scored = resolve(self.checked_scorer or self.scorer)(same, **dict(options))[0]
            return {name: scored.get(name) for name in self.headline_metrics[:1]}

        screening = resolve(self.screening) if self.screening else None
        rule_scored = self.paper_judge_model is None
        return attach_screening(screening, records, metrics, details, baseline if rule_scored else None)

    def table_keys(self, keys: tuple[str, ...] | list[str]) -> tuple[str, ...]:
        """The metric keys a task or group of this benchmark lists in the host's table: ``keys``, plus the
        screening count (``screening.SCREENED_OUTPUTS``) where the benchmark screens its outputs and
        ``keys`` hold one of its count columns (``screening.with_screened_column``)."""
        if self.screening is None:
            return tuple(keys)
        from lmms_eval_tasks.framework.screening import with_screened_column

        return with_screened_column(keys, self.count_keys)

    def task_options(self, task: str) -> dict[str, Any]:
        """The scoring options of ``task`` from the benchmark's config function ({} without one)."""
        return dict(resolve(self.options)(task)) if self.options else {}


_lock = threading.Lock()
_discovered: dict[str, Benchmark] | None = None
_registered: dict[str, Benchmark] = {}


def _discover() -> dict[str, Benchmark]:
    """Every ``BENCHMARK`` of a package in the tasks folder (found by folder: the registry imports no
    benchmark by name)."""
    from lmms_eval_tasks import TASKS_DIR, TASKS_PACKAGE

    found: dict[str, Benchmark] = {}
    for module_info in sorted(pkgutil.iter_modules([str(TASKS_DIR)]), key=lambda info: info.name):
        if not module_info.ispkg:
            continue
        module = importlib.import_module(f"{TASKS_PACKAGE}.{module_info.name}")
        benchmark = getattr(module, "BENCHMARK", None)
        if benchmark is None:
            continue
        if not isinstance(benchmark, Benchmark):
            raise TypeError(f"{module.__name__}.BENCHMARK is a {type(benchmark).__name__}, not a Benchmark")
        if benchmark.name in found:
            raise ValueError(f"two packages define benchmark {benchmark.name!r}")
        found[benchmark.name] = benchmark
    return found


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


def get_scorer(benchmark: str) -> Callable[..., dict[str, Any]]:
    """Return the ``score`` function for ``benchmark`` or raise KeyError listing the known ones."""
    return resolve(get_benchmark(benchmark).scorer)
