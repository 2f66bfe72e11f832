"""ConTextual's report section: acceptance rate per scenario and natural vs digital, with 95% intervals."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lmms_eval_tasks.reporting.sections import (
    Block,
    SectionContext,
    Table,
    Text,
    grouped_bars,
    metrics_table,
)
from lmms_eval_tasks.tasks.contextual.published import PUBLISHED, PUBLISHED_VALIDATION

# Test rows under the paper's names, validation rows marked as such (the pack's `contextual` task runs
# the 100 validation instructions, `contextual_test` the 506 test ones).
PUBLISHED_ROWS = (
    *PUBLISHED,
    *(replace(row, label=f"{row.label} (validation, 100)") for row in PUBLISHED_VALIDATION),
)
WILSON_LOW, WILSON_HIGH = "wilson95_low", "wilson95_high"  # computed for the page from accepted/judged
INTERVAL_COLUMNS = {
    "acceptance_rate_ci95_low": "95% low (normal, official)",
    "acceptance_rate_ci95_high": "95% high (normal, official)",
    WILSON_LOW: "95% low (Wilson)",
    WILSON_HIGH: "95% high (Wilson)",
}


def render(context: SectionContext) -> list[Block]:
    """Main table with the paper's rows, per-scenario rates with 95% intervals, natural vs digital."""
    from lmms_eval_tasks.tasks.contextual.scoring import (
        DIGITAL_SCENARIOS,
        NATURAL_SCENARIOS,
        SCENARIOS,
    )

    entries = [entry for entry in context.entries if "acceptance_rate" in entry.metrics]
    submissions = [entry for entry in context.entries if "submission_rows" in entry.metrics]
    blocks: list[Block] = [
        Text(
            "Acceptance rate in percent (share of responses the judge accepts). Intervals: 95% normal "
            "approximation from the judged counts (the official analysis' method, labelled 'official'), and "
            "the Wilson score interval, which stays informative where the normal one degenerates to a point "
            "(0 or all of the judged accepted: 0 of 10 reads [0.00, 0.00], yet 0% is not certain)."
        ),
    ]
    if entries:
        columns = [
            ("acceptance_rate", "overall"),
            *INTERVAL_COLUMNS.items(),
            *((f"acceptance_rate_{name}", name) for name in SCENARIOS),
            ("acceptance_rate_natural", "natural"),
            ("acceptance_rate_digital", "digital"),
            ("judged", "judged"),
            ("unjudged", "unjudged"),
            ("judge_model", "judge"),
        ]
        blocks.append(
            metrics_table("Main results, a row per run", entries, columns, PUBLISHED_ROWS, value=_with_wilson)
        )
    pools = [*((s, (s,)) for s in SCENARIOS), ("natural", NATURAL_SCENARIOS), ("digital", DIGITAL_SCENARIOS)]
    groups = [name for name, _ in pools]
    series, errors = {}, {}
    for entry in entries:
        per_scenario = entry.details.get("per_scenario") or {}
        if not per_scenario:
            continue
        rows = [[name, *_rate_row(entry.metrics, name, per_scenario, members)] for name, members in pools]
        bounds = []
        for row in rows:
            row[4:4] = wilson_percent(row[-2], row[-1])
            collapsed = row[2] is not None and row[2] == row[3] and row[4] is not None  # 0 or all accepted
            bounds.append((row[4], row[5]) if collapsed else None if row[2] is None else (row[2], row[3]))
        series[entry.label], errors[entry.label] = [row[1] for row in rows], bounds
        blocks.append(
            Table(
                f"Per scenario with 95% intervals: {entry.label}",
                ["scenario", "acceptance %", *INTERVAL_COLUMNS.values(), "accepted", "judged"],
                rows,
                f"natural = {', '.join(NATURAL_SCENARIOS)}; digital = {', '.join(DIGITAL_SCENARIOS)}",
            )
        )
    if series:
        blocks.insert(
            2,
            grouped_bars(
                "ConTextual acceptance rate per scenario (95% intervals)",
                context.plot_name("per_scenario"),
                groups,
                series,
                "acceptance %",
                "Error bars: the table's normal (official) 95% interval; the Wilson one where the normal "
                "collapses to a point (none or all accepted). Natural and digital, right of the dashed "
                "line, pool the scenarios. 'n/a': no judged item; a flat line on the axis: 0.",
                errors=errors,
                aggregates=2,
            ),
        )
    if submissions:
        blocks.append(
            metrics_table(
                "Leaderboard submissions (unjudged test split)",
                submissions,
                [("submission_rows", "rows"), ("empty_predictions", "empty predictions")],
                note="Export with: lmms-eval-tasks export contextual RUN_DIR --out FILE",
            )
        )
    return blocks


def wilson_percent(accepted: int, judged: int) -> list[float | None]:
    """[low, high] of the 95% Wilson score interval in percent ([None, None] without judged items)."""
    from lmms_eval_tasks.uncertainty.analytic import wilson_interval

    if not judged or accepted > judged:  # the official Misc. denominator can exceed the judged count
        return [None, None]
    if not float(accepted).is_integer() or not float(judged).is_integer():  # counts averaged over repeats
        return [None, None]
    interval = wilson_interval(int(accepted), int(judged))
    return [100.0 * interval.low, 100.0 * interval.high]


def _with_wilson(entry: Any, key: str) -> Any:
    """A main-table cell: the report's metric, or the overall Wilson bound from its accepted/judged."""
    if key in (WILSON_LOW, WILSON_HIGH):
        bounds = wilson_percent(entry.metrics.get("accepted") or 0, entry.metrics.get("judged") or 0)
        return bounds[0] if key == WILSON_LOW else bounds[1]
    return entry.metrics.get(key)


def _rate_row(metrics: dict, name: str, per_scenario: dict, members: tuple[str, ...]) -> list:
    """[rate, 95% low, 95% high, accepted, judged] of ``members`` pooled: the report's rate and interval, else
    (older reports) the scorer's functions on the counts summed from ``details.per_scenario``."""
    from lmms_eval_tasks.tasks.contextual.scoring import normal_interval, rate_percent

    accepted = sum(int(per_scenario.get(name, {}).get("accepted") or 0) for name in members)
    judged = sum(int(per_scenario.get(name, {}).get("judged") or 0) for name in members)
    key = f"acceptance_rate_{name}"
    if key in metrics and f"{key}_ci95_low" in metrics:
        return [metrics[key], metrics[f"{key}_ci95_low"], metrics[f"{key}_ci95_high"], accepted, judged]
    low, high = normal_interval(accepted, judged)
    return [rate_percent(accepted, judged), low, high, accepted, judged]
