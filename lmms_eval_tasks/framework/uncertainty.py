"""The one place that gives every benchmark's headline metrics a standard error and a 95% interval.

Each benchmark's ``tasks/<b>/uncertainty.py`` defines ``uncertainty_rows(records, **scoring options) ->
Rows``: the rows its metrics are sums over (questions, figures, records at a corruption level), the unit
each row belongs to (``uncertainty.UNITS``), and a vectorised statistic mapping per-unit totals to every
headline metric (see lmms_eval_tasks.uncertainty). This module runs the seeded cluster bootstrap on them
(``headline_uncertainty``), pairs two runs (``paired_difference``), and adds the results to a scorer's
output (``attach``: ``<metric>_stderr`` and an ``uncertainty`` block). The hook runtime and
``lmms-eval-tasks score`` call ``score_with_uncertainty`` after scoring; ``compare`` calls
``paired_difference``. Options ``bootstrap_resamples`` (0 turns it off) and ``bootstrap_seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

OPTION_NAMES = ("bootstrap_resamples", "bootstrap_seed")
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0


@dataclass
class Rows:
    """A benchmark's bootstrap input: one unit label per row, row values, the statistic, the unit's name.

    ``values`` ``[n, ...]`` (with ``cells``: per-row cell codes in ``0..n_cells-1``); ``statistic(totals)``
    returns ``{metric: [R]}`` for the headline metrics it covers. ``identity`` names each row's record
    (for ``compare``: two runs pair only when their identities are the same set). ``closed_form`` holds
    metrics whose interval is analytic (``metric -> Uncertainty``), used instead of the bootstrap.
    """

    units: Sequence[Any]
    values: Any
    statistic: Callable[[Any], dict[str, Any]]
    unit: str
    cells: Any = None
    n_cells: int | None = None
    identity: Sequence[str] | None = None
    closed_form: dict[str, Any] = field(default_factory=dict)
    note: str | None = None


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], int, int]:
    """(the scorer's own options, resamples, seed): the bootstrap options checked (one-line OptionError)."""
    from lmms_eval_tasks.framework.input_checks import check_option

    rest = {key: value for key, value in options.items() if key not in OPTION_NAMES}
    resamples = check_option(
        "bootstrap_resamples", options.get("bootstrap_resamples", DEFAULT_RESAMPLES), int, minimum=0
    )
    if resamples == 1:
        from lmms_eval_tasks.framework.input_checks import OptionError

        raise OptionError("option bootstrap_resamples: expected 0 (off) or an integer >= 2, got 1")
    seed = check_option("bootstrap_seed", options.get("bootstrap_seed", DEFAULT_SEED), int, minimum=0)
    return rest, int(resamples), int(seed)


def rows_function(benchmark: str) -> Callable[..., Rows] | None:
    """The benchmark's ``uncertainty_rows`` (from ``Benchmark.uncertainty``), or None when it has none."""
    from lmms_eval_tasks.framework.registry import get_benchmark, resolve

    target = get_benchmark(benchmark).uncertainty
    return resolve(target) if target else None


def accepted_options(function: Callable[..., Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``options`` ``function`` takes (all of them when it takes ``**options``): judge settings and the
    like, which only the scorer needs, are not the rows' business."""
    import inspect

    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(options)
    return {key: value for key, value in options.items() if key in parameters}


def bootstrap_rows(rows: Rows, *, n_resamples: int, seed: int) -> dict[str, Any]:
    """``{metric: Uncertainty}``: the cluster bootstrap of ``rows`` (closed forms where given)."""
    from lmms_eval_tasks.uncertainty import Uncertainty, cluster_bootstrap

    result = cluster_bootstrap(
        rows.statistic,
        list(rows.units),
        rows.values,
        cells=rows.cells,
        n_cells=rows.n_cells,
        n_resamples=n_resamples,
        seed=seed,
        unit=rows.unit,
    )
    output = dict(result) if isinstance(result, dict) else {}
    if rows.note:
        from dataclasses import replace

        output = {
            name: replace(value, reason="; ".join(part for part in (value.reason, rows.note) if part))
            for name, value in output.items()
        }
    output.update(rows.closed_form)
    return {name: value for name, value in output.items() if isinstance(value, Uncertainty)}


def headline_uncertainty(benchmark: str, records: Sequence[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """``{metric: Uncertainty}`` for the benchmark's headline metrics from scored records ({} when off)."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    scoring_options, resamples, seed = split_options(options)
    make_rows = rows_function(benchmark)
    if make_rows is None or resamples == 0:
        return {}
    rows = make_rows(list(records), **accepted_options(make_rows, scoring_options))
    headline = get_benchmark(benchmark).headline_metrics
    result = bootstrap_rows(rows, n_resamples=resamples, seed=seed)
    return {name: result[name] for name in headline if name in result}


def uncertainty_block(uncertainties: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's ``uncertainty`` block: ``{metric: {estimate, stderr, low, high, method, unit, ...}}``."""
    return {name: value.as_dict() for name, value in uncertainties.items()}


def stderr_metrics(uncertainties: Mapping[str, Any]) -> dict[str, float | None]:
    """``{<metric>_stderr: standard error}`` (None where it cannot be computed)."""
    return {f"{name}_stderr": value.stderr for name, value in uncertainties.items()}


def score_with_uncertainty(
    benchmark: str,
    records: Sequence[dict[str, Any]],
    metrics: Mapping[str, Any],
    **options: Any,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(metrics plus ``<metric>_stderr``, the uncertainty block), after scoring ``records`` into ``metrics``.

    A failure here never loses the metrics: it is logged with its cause and the block says why.
    """
    try:
        uncertainties = headline_uncertainty(benchmark, records, **options)
    except Exception as error:  # noqa: BLE001 - the point estimates stand; the interval's absence is logged
        from lmms_eval_tasks.framework.input_checks import OptionError

        if isinstance(error, OptionError):
            raise
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        logger.warning(f"{benchmark}: no standard errors ({reason})")
        return dict(metrics), {"_error": {"reason": reason}}
    for name, value in uncertainties.items():
        estimate, scored = value.estimate, metrics.get(name)
        if isinstance(scored, int | float) and estimate is not None and abs(float(scored) - estimate) > 1e-6:
            logger.warning(
                f"{benchmark}: {name} bootstrap estimate {estimate} differs from the scorer's {scored}"
            )
    return {**metrics, **stderr_metrics(uncertainties)}, uncertainty_block(uncertainties)


def paired_difference(
    benchmark: str,
    records_a: Sequence[dict[str, Any]],
    records_b: Sequence[dict[str, Any]],
    *,
    metrics: Sequence[str] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """``{metric: Difference}`` (B minus A), the paired bootstrap by shared units; ValueError when the runs'
    records differ (different subsets, seeds or protocols: the pairing would be meaningless)."""
    from lmms_eval_tasks.framework.registry import get_benchmark
    from lmms_eval_tasks.uncertainty import paired_bootstrap

    scoring_options, resamples, seed = split_options(options)
    make_rows = rows_function(benchmark)
    if make_rows is None:
        raise ValueError(f"benchmark {benchmark!r} has no uncertainty rows (Benchmark.uncertainty is None)")
    scoring_options = accepted_options(make_rows, scoring_options)
    rows_a = make_rows(list(records_a), **scoring_options)
    rows_b = make_rows(list(records_b), **scoring_options)
    check_same_records(rows_a, rows_b)
    result = paired_bootstrap(
        rows_a.statistic,
        list(rows_a.units),
        list(rows_b.units),
        rows_a.values,
        rows_b.values,
        cells_a=rows_a.cells,
        cells_b=rows_b.cells,
        n_cells=rows_a.n_cells,
        n_resamples=max(resamples, 2),
        seed=seed,
        unit=rows_a.unit,
    )
    result = dict(result) if isinstance(result, dict) else {}
    wanted = list(metrics) if metrics else list(get_benchmark(benchmark).headline_metrics)
    return {name: result[name] for name in wanted if name in result}


def check_same_records(rows_a: Rows, rows_b: Rows) -> None:
    """ValueError (one line) unless both runs hold the same records (identity) in the same cell layout."""
    if rows_a.identity is not None and rows_b.identity is not None:
        only_a = set(rows_a.identity) - set(rows_b.identity)
        only_b = set(rows_b.identity) - set(rows_a.identity)
        if only_a or only_b:
            shown = ", ".join(repr(key) for key in sorted(only_a | only_b)[:3])
            raise ValueError(
                f"the runs hold different records ({len(only_a)} only in run A, {len(only_b)} only in run B, "
                f"e.g. {shown}): compare runs of the same task, subset, seed and protocol"
            )
        if len(rows_a.identity) != len(rows_b.identity):
            raise ValueError(
                f"the runs hold {len(rows_a.identity)} and {len(rows_b.identity)} records with the same "
                "identities (repeated records?): compare runs of the same task, subset, seed and protocol"
            )
    if rows_a.n_cells != rows_b.n_cells:
        raise ValueError(
            f"the runs' records fall into different cells ({rows_a.n_cells} vs {rows_b.n_cells}): compare "
            "runs of the same task, subset, seed and protocol"
        )
