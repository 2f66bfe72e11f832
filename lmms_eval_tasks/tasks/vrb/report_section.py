"""VRB's report section: error vs severity per corruption, the VRE radar, per-model and per-corruption tables
(pooled: VRE rescaled over every run shown, unlike each run's own ``vre``)."""

from __future__ import annotations

import math
from typing import Any

from lmms_eval_tasks.reporting.sections import (
    SQUARE,
    Block,
    SectionContext,
    Table,
    Text,
    add_legend,
    grouped_bars,
    legend_figure,
    lines,
    metrics_table,
    series_style,
    to_plot,
)
from lmms_eval_tasks.tasks.vrb.published import PUBLISHED

SUB_METRIC_HEADERS = {
    "first_drop": "F (first drop)",
    "range_of_error": "R (range of error)",
    "error_rate": "rho (error rate)",
    "average_error": "mu (average error)",
    "average_difference": "Delta (average difference)",
}
MAIN_COLUMNS = (
    ("accuracy_clean", "clean accuracy"),
    ("accuracy_average", "mean accuracy, levels 0-5"),
    ("relative_accuracy_drop", "relative drop"),
    *SUB_METRIC_HEADERS.items(),
    ("vre", "VRE (own corruptions)"),
    ("questions", "records"),
)


def level_curve(entry: Any, corruption: str) -> list[float] | None:
    """Accuracy at severities 0..5 of ``corruption`` for one run (None when a level is missing)."""
    cell = (entry.details.get("by_corruption") or {}).get(corruption) or {}
    levels = cell.get("accuracy_by_level")
    if isinstance(levels, list) and len(levels) == 6 and all(isinstance(v, (int, float)) for v in levels):
        return [float(v) for v in levels]
    by_level = entry.details.get("accuracy_by_level") or {}
    values = [by_level.get("clean"), *(by_level.get(f"{corruption}_s{k}") for k in range(1, 6))]
    return [float(v) for v in values] if all(isinstance(v, (int, float)) for v in values) else None


def _corruptions(entries: list[Any]) -> list[str]:
    names: list[str] = []
    for entry in entries:
        names.extend(
            entry.details.get("complete_corruptions") or list(entry.details.get("by_corruption") or {})
        )
    return list(dict.fromkeys(names))


RADAR_AXES = ("F", "R", "rho", "mu", "Delta")
RADAR_CAPTION = (
    "Min-max scaled sub-metrics (over the pool of runs shown), averaged over corruptions; "
    "larger is less robust."
)


def radar_plot(context: SectionContext, series: dict[str, list[float | None]], title: str, name: str) -> Any:
    """The VRE radar; bars instead when fewer than 3 axes have a non-zero value (a radar would collapse
    to a line or a point and hide that), with the reason in the caption."""
    shown = [
        axis
        for index, axis in enumerate(RADAR_AXES)
        if any(isinstance(values[index], (int, float)) and math.isfinite(values[index]) and values[index] != 0
               for values in series.values())
    ]  # fmt: skip
    if len(shown) < 3:
        flat = [axis for axis in RADAR_AXES if axis not in shown]
        return grouped_bars(
            title.replace("radar", "bars"),
            context.plot_name(name),
            list(RADAR_AXES),
            series,
            "scaled sub-metric (0-1)",
            RADAR_CAPTION + f" Drawn as bars, not a radar: {', '.join(flat)} "
            f"{'is' if len(flat) == 1 else 'are'} 0 or undefined for every run, so a radar would collapse.",
            ylim=(0.0, 1.0),
        )
    fig, axes = legend_figure(list(series), SQUARE, polar=True)
    angles = [2 * math.pi * i / 5 for i in range(5)]
    handles = []
    for index, values in enumerate(series.values()):
        clean = [0.0 if v is None or not math.isfinite(v) else v for v in values]
        (handle,) = axes.plot(angles + angles[:1], clean + clean[:1], **series_style(index))
        axes.fill(angles + angles[:1], clean + clean[:1], alpha=0.1, color=series_style(index)["color"])
        handles.append(handle)
    axes.set_xticks(angles)
    axes.set_xticklabels(list(RADAR_AXES))
    axes.set_ylim(0, 1)
    axes.set_title(title, fontsize=10)
    legend_height = add_legend(fig, handles, list(series))
    return to_plot(fig, title, context.plot_name(name), RADAR_CAPTION, legend_height)


def render(context: SectionContext) -> list[Block]:
    """Every VRB table and plot for the runs of this report."""
    from lmms_eval_tasks.tasks.vrb.scoring import MODEL_KEYS, SUB_METRICS, robustness

    entries = context.entries

    def error_plot(title: str, name: str, series: dict[str, Any]) -> Block:
        axes = ("severity (0 = clean)", "error (1 - accuracy)")
        return lines(title, context.plot_name(name), series, *axes, ylim=(0.0, 1.0))

    blocks: list[Block] = [
        Text(
            "Accuracies and sub-metrics are fractions (VQA accuracy, 0-1). F, R, rho, mu, Delta as in the "
            "paper; each run's own VRE is scaled over its corruptions only."
        ),
        metrics_table("Main results, a row per run", entries, MAIN_COLUMNS, PUBLISHED),
    ]
    corruptions = _corruptions(entries)
    for corruption in corruptions:
        curves = {entry.label: level_curve(entry, corruption) for entry in entries}  # labels are unique
        series = {label: (range(6), [1 - v for v in curve]) for label, curve in curves.items() if curve}
        if series:
            blocks.append(error_plot(f"Error vs severity: {corruption}", f"error_{corruption}", series))
    if len(corruptions) > 1:
        for entry in entries:
            curves = {c: level_curve(entry, c) for c in corruptions}
            every = {c: (range(6), [1 - value for value in curve]) for c, curve in curves.items() if curve}
            if every:
                title = f"Error vs severity, every corruption: {entry.label}"
                blocks.append(error_plot(title, f"error_all_{entry.run}_{entry.task}", every))
    pool: dict[str, dict[str, list[float]]] = {}
    common = [c for c in corruptions if all(level_curve(entry, c) is not None for entry in entries)]
    if common:
        pool = {entry.label: {c: level_curve(entry, c) for c in common} for entry in entries}
    if pool:
        result = robustness(pool)
        note = "; ".join(result["notes"]) or f"pool: {len(pool)} run(s) x {len(common)} corruption(s)"
        columns = [*SUB_METRICS, "accuracy_average", "relative_accuracy_drop", "vre"]
        for title, first, keys, rows, table_note in (
            ("Per model (pooled VRE)", "run / task", MODEL_KEYS, result["models"], note),
            ("Per corruption (pooled VRE)", "corruption", columns, result["corruptions"], ""),
        ):
            table = [[name, *(values.get(key) for key in keys)] for name, values in rows.items()]
            blocks.append(Table(title, [first, *keys], table, table_note))
        if result["pool"]["vre_computed"]:
            cells = result["cells"]
            series = {model: scaled_means(cells, [(model, c) for c in common]) for model in cells}
            blocks.append(radar_plot(context, series, "VRE radar: scaled sub-metrics per run", "radar"))
    for entry in entries:
        by_type = entry.details.get("accuracy_by_question_type") or {}
        if by_type:
            rows = [list(item) for item in by_type.items()]
            title = f"Accuracy by question type: {entry.label}"
            blocks.append(Table(title, ["question type", "accuracy"], rows))
    return blocks


def scaled_means(cells: dict[str, dict[str, Any]], pairs: list[tuple[str, str]]) -> list[float | None]:
    """Each sub-metric's scaled value (``robustness`` cells) averaged over the (model, corruption) ``pairs``
    where it is finite; None where it is nowhere."""
    from lmms_eval_tasks.tasks.vrb.scoring import SUB_METRICS

    means = []
    for key in SUB_METRICS:
        values = [cells[m][c]["scaled"][key] for m, c in pairs]
        finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
        means.append(sum(finite) / len(finite) if finite else None)
    return means
