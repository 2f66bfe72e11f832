"""Standard errors and 95% intervals of the headline metrics, bootstrapped from ``details["resampling"]``;
options ``bootstrap_resamples`` (0: off) and ``bootstrap_seed``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loguru import logger

from lmms_eval_tasks.uncertainty.resampling import Resampling

OPTION_NAMES = ("bootstrap_resamples", "bootstrap_seed")
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
RESAMPLING = "resampling"  # the details key of the scorer's Resampling (never written to a report)
NO_RESAMPLING = "no_resampling"  # the details key where a scorer without resampling says why (one line)


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], int, int]:
    """(the scorer's own options, resamples, seed): the bootstrap options checked (one-line OptionError)."""
    from lmms_eval_tasks.framework.input_checks import OptionError, check_option

    rest = {key: value for key, value in options.items() if key not in OPTION_NAMES}
    resamples = check_option(
        "bootstrap_resamples", options.get("bootstrap_resamples", DEFAULT_RESAMPLES), int, minimum=0
    )
    if resamples == 1:
        raise OptionError("option bootstrap_resamples: expected 0 (off) or an integer >= 2, got 1")
    seed = check_option("bootstrap_seed", options.get("bootstrap_seed", DEFAULT_SEED), int, minimum=0)
    return rest, int(resamples), int(seed)


def attach_intervals(
    benchmark: str, metrics: Mapping[str, Any], details: Mapping[str, Any], **options: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metrics plus ``<metric>_stderr``, details with the ``uncertainty`` block and without the
    resampling); a failure here never loses the metrics: it is logged, and the block says why."""
    details = dict(details)
    resampling = details.pop(RESAMPLING, None)
    why_none = details.pop(NO_RESAMPLING, None)
    _, resamples, seed = split_options(options)
    if resampling is None and resamples:  # the scorer's reason, in the report; none given: a loud warning
        if not why_none:
            why_none = f"the scorer gave no details[{RESAMPLING!r}]: no standard error for any number"
            logger.warning(f"{benchmark}: {why_none}")
        return dict(metrics), {**details, "uncertainty": {"_error": {"reason": str(why_none)}}}
    if resampling is None or resamples == 0:
        return dict(metrics), details
    try:
        uncertainties = headline(benchmark, resampling, resamples, seed)
    except Exception as error:  # noqa: BLE001 - the point estimates stand; the interval's absence is logged
        reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        logger.warning(f"{benchmark}: no standard errors ({reason})")
        return dict(metrics), {**details, "uncertainty": {"_error": {"reason": reason}}}
    for name, value in uncertainties.items():
        estimate, scored = value.estimate, metrics.get(name)
        if isinstance(scored, int | float) and estimate is not None and abs(float(scored) - estimate) > 1e-9:
            logger.warning(
                f"{benchmark}: {name} bootstrap estimate {estimate} differs from the scorer's {scored}"
            )
    if uncertainties:
        details["uncertainty"] = {name: value.as_dict() for name, value in uncertainties.items()}
    stderr = {f"{name}_stderr": value.stderr for name, value in uncertainties.items()}
    return {**metrics, **stderr}, details


def headline(benchmark: str, resampling: Resampling, resamples: int, seed: int) -> dict[str, Any]:
    """``{metric: Uncertainty}`` for the benchmark's headline metrics that ``resampling`` covers."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    result = bootstrap(resampling, n_resamples=resamples, seed=seed)
    return {name: result[name] for name in get_benchmark(benchmark).headline_metrics if name in result}


def bootstrap(resampling: Resampling, *, n_resamples: int, seed: int) -> dict[str, Any]:
    """``{metric: Uncertainty}``: the cluster bootstrap of ``resampling`` (closed forms where given)."""
    from dataclasses import replace

    from lmms_eval_tasks.uncertainty.bootstrap import cluster_bootstrap
    from lmms_eval_tasks.uncertainty.result import Uncertainty

    result = cluster_bootstrap(
        resampling.statistic,
        list(resampling.units),
        resampling.values,
        cells=resampling.cells,
        n_cells=resampling.n_cells,
        n_resamples=n_resamples,
        seed=seed,
        unit=resampling.unit,
    )
    output = dict(result) if isinstance(result, dict) else {}
    if resampling.note:
        output = {
            name: replace(value, reason="; ".join(part for part in (value.reason, resampling.note) if part))
            for name, value in output.items()
        }
    output.update(resampling.closed_form)
    return {name: value for name, value in output.items() if isinstance(value, Uncertainty)}


def headline_intervals(benchmark: str, records: Sequence[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """``{metric: Uncertainty}`` of ``records`` scored by the benchmark ({}: off, or no resampling)."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    scoring_options, resamples, seed = split_options(options)
    if resamples == 0:
        return {}
    resampling = get_benchmark(benchmark).score(list(records), **scoring_options)[1].get(RESAMPLING)
    return {} if resampling is None else headline(benchmark, resampling, resamples, seed)


def paired_difference(
    benchmark: str,
    records_a: Sequence[dict[str, Any]],
    records_b: Sequence[dict[str, Any]],
    *,
    metrics: Sequence[str] | None = None,
    checked: Any = None,
    **options: Any,
) -> dict[str, Any] | None:
    """``{metric: Difference}`` (B minus A) of two validated runs (``paired_resamplings``), None when the
    scorer gives no resampling; ``checked``: the scorer's options object, when the caller built it."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    scoring_options, resamples, seed = split_options(options)
    benchmark_entry = get_benchmark(benchmark)
    checked = checked or benchmark_entry.check_options(**scoring_options)
    rows_a = benchmark_entry.score_with(list(records_a), checked)[1].get(RESAMPLING)
    rows_b = benchmark_entry.score_with(list(records_b), checked)[1].get(RESAMPLING)
    if rows_a is None or rows_b is None:
        return None
    result = paired_resamplings(rows_a, rows_b, resamples, seed)
    wanted = list(metrics) if metrics else list(benchmark_entry.headline_metrics)
    return {name: result[name] for name in wanted if name in result}


def paired_resamplings(rows_a: Resampling, rows_b: Resampling, resamples: int, seed: int) -> dict[str, Any]:
    """``{metric: Difference}`` (B minus A): paired bootstrap of two runs' resamplings (same records)."""
    from lmms_eval_tasks.uncertainty.bootstrap import paired_bootstrap

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
    return dict(result) if isinstance(result, dict) else {}


def check_same_records(rows_a: Resampling, rows_b: Resampling) -> None:
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
