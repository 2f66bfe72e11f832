"""A benchmark's section of ``lmms-eval-tasks report``: its ``report_section`` gets a ``SectionContext`` and
returns blocks (``Table``, ``Plot``, ``Text``), built with the helpers here (docs/reports.md)."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmms_eval_tasks.reporting.published import PUBLISHED_MARK, PublishedRow
from lmms_eval_tasks.reporting.undefined import finite_number, uncertainty_of

# Counts that change a headline number when not zero; a benchmark declares its own (registry ``count_keys``).
DEFAULT_COUNT_KEYS: tuple[str, ...] = ("unparsed", "unjudged", "empty_predictions", "no_verdict")

# Every plot is drawn at a fixed size (inches x DPI, no tight bounding box), so its PNG has a known size.
DPI = 100
WIDE = (7.2, 4.0)  # 720 x 400 px
SQUARE = (6.0, 6.0)  # 600 x 600 px


@dataclass
class Table:
    """A table: column headers and rows of cells (numbers are formatted by ``fmt`` when rendered)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    note: str = ""


@dataclass
class Plot:
    """A PNG image with its pixel size (embedded as a data URI in HTML, a file next to report.md)."""

    title: str
    name: str
    png: bytes
    width: int
    height: int
    caption: str = ""


@dataclass
class Text:
    """A paragraph of plain text."""

    text: str


Block = Table | Plot | Text


@dataclass
class Entry:
    """One top-level report (task or group) of one run: ``members`` holds the group's member reports."""

    run: str
    task: str
    report: dict[str, Any]
    members: dict[str, dict[str, Any]] = field(default_factory=dict)
    count_keys: tuple[str, ...] = DEFAULT_COUNT_KEYS  # its benchmark's count columns

    @property
    def label(self) -> str:
        """``run / task``: the row label of this entry in a table."""
        return f"{self.run} / {self.task}"

    @property
    def metrics(self) -> dict[str, Any]:
        return self.report.get("metrics", {})

    @property
    def details(self) -> dict[str, Any]:
        return self.report.get("details", {})


@dataclass
class SectionContext:
    """What a section renders: its benchmark (registry entry) and the entries of every run, in run order."""

    benchmark: Any
    entries: list[Entry]
    plot_prefix: str = ""  # instead of the benchmark's name (`vre --plots`)

    def plot_name(self, name: str) -> str:
        """A file name for a plot, unique within the report (``<benchmark>_<name>.png``)."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
        return f"{self.plot_prefix or self.benchmark.name}_{safe}.png"


def fmt(value: Any) -> str:
    """A cell as text: None/NaN -> 'n/a', integers as is, floats with 2 decimals (3 below 1 in size)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "n/a"
        return f"{value:.3f}" if abs(value) < 1 and value != 0 else f"{value:.2f}"
    return str(value)


Z_95 = 1.959963984540054
NOT_SIGNIFICANT = "≈"  # marks a run whose difference from the best run is not significant at 95%
# Headline metrics where smaller is better (errors, drops, spreads, failure counts); the rest: larger.
_LOWER_IS_BETTER = re.compile(r"unparsed|rmse|drop|error|std_over|range|difference|unjudged|^vre$")
# Shares with no better direction (HallusionBench's diagnosis of wrong answers): intervals, no marks.
_NO_DIRECTION = re.compile(r"^(LH|VI|Mixed)$")
UNPAIRED_NOTE = (
    "CI: the 95% interval of the run's number (its standard error's method and unit: uncertainty.md in the "
    "pack's documentation). "
    f"'best' marks the best run per column (among runs whose answers parsed; none on a tie), "
    f"'{NOT_SIGNIFICANT}' a run whose difference from it is not "
    f"significant at 95%: |difference| < {Z_95:.2f} x sqrt(se_a^2 + se_b^2), the standard error of the "
    "difference of two independent runs (not overlapping intervals, which is no test). Runs on the same "
    "questions are positively correlated, so this unpaired test is conservative; `lmms-eval-tasks compare` "
    "gives the paired test."
)


def stderr_of(entry: Entry, key: str) -> float | None:
    """The standard error of ``key``: the ``<key>_stderr`` metric, else the uncertainty block's."""
    value = finite_number(entry.metrics.get(f"{key}_stderr"))
    if value is None:
        value = finite_number((uncertainty_of(entry.report, key) or {}).get("stderr"))
    return value


def interval_of(entry: Entry, key: str) -> tuple[float, float] | None:
    """The 95% interval (low, high) of ``key`` from the uncertainty block, or None."""
    block = uncertainty_of(entry.report, key) or {}
    low, high = finite_number(block.get("low")), finite_number(block.get("high"))
    return None if low is None or high is None else (low, high)


def interval_errors(
    entries: Sequence[Entry], keys: Sequence[str]
) -> dict[str, list[tuple[float, float] | None]]:
    """``grouped_bars`` error bars: per entry label, the interval of each key (None where absent)."""
    return {entry.label: [interval_of(entry, key) for key in keys] for entry in entries}


def significance_marks(
    values: Sequence[float | None], stderrs: Sequence[float | None], lower_is_better: bool = False
) -> list[str]:
    """Per run: 'best', NOT_SIGNIFICANT (|x - best| < 1.96 sqrt(se^2 + se_best^2)) or ''; all '' with fewer
    than two values, or when several share the best one."""
    present = [i for i, value in enumerate(values) if value is not None]
    if len(present) < 2:
        return [""] * len(values)
    best = (min if lower_is_better else max)(present, key=lambda i: values[i])
    if sum(values[i] == values[best] for i in present) > 1:
        return [""] * len(values)
    marks = []
    for i, value in enumerate(values):
        if i == best:
            marks.append("best")
            continue
        se, se_best = stderrs[i], stderrs[best]
        if value is None or se is None or se_best is None:
            marks.append("")
            continue
        spread = math.sqrt(se * se + se_best * se_best)
        difference = abs(value - values[best])
        marks.append(NOT_SIGNIFICANT if (difference == 0 or difference < Z_95 * spread) else "")
    return marks


def interval_cell(interval: tuple[float, float] | None, mark: str) -> str | None:
    """A CI column's text: ``[low, high]`` and the significance mark; None when there is no interval."""
    if interval is None:
        return mark or None
    text = f"[{fmt(interval[0])}, {fmt(interval[1])}]"
    return f"{text} {mark}" if mark else text


SAMPLE_CAVEAT = (
    "Runs of bundled sample tasks ('_sample': generated data, a few questions) are not comparable with the "
    "published rows (the benchmark's real data): no run is marked best against them."
)
_SAMPLE_TASK = re.compile(r"(^|_)sample(_|$)")


def nothing_parsed(entry: Entry) -> bool:
    """True when none of the run's answers parsed (``unparsed`` equals its records): its number is the
    scoring rule's for no answer, so it competes for no 'best'."""
    records = finite_number(entry.details.get("records"))
    unparsed = finite_number(entry.metrics.get("unparsed"))
    return bool(records) and unparsed is not None and unparsed >= records


def is_count(entry: Entry, key: str) -> bool:
    """A count column (``unparsed``, ``screened_outputs``, ``simple_unparsed``...): no interval, no mark."""
    counts = {*entry.count_keys, "screened_outputs"}
    return any(key == count or key.endswith(f"_{count}") or key.startswith(f"{count}_") for count in counts)


def metrics_table(
    title: str,
    entries: Sequence[Entry],
    columns: Sequence[tuple[str, str]],
    published: Iterable[PublishedRow] = (),
    note: str = "",
    value: Callable[[Entry, str], Any] | None = None,
) -> Table:
    """A row per entry with ``columns`` = (metric key, header), then the published rows; a metric some run
    has an interval for gets a ``<header> 95% CI`` column with significance marks."""
    read = value or (lambda entry, key: entry.metrics.get(key))
    published = list(published)
    sample_vs_published = bool(published) and any(_SAMPLE_TASK.search(entry.task) for entry in entries)
    layout: list[tuple[str, str, bool]] = []
    for key, header in columns:
        layout.append((key, header, False))
        counted = bool(entries) and is_count(entries[0], key)
        if not counted and any(interval_of(entry, key) is not None for entry in entries):
            layout.append((key, f"{header} 95% CI", True))
    cells: dict[str, list[str]] = {}
    for key, _, is_interval in layout:
        if is_interval:
            values = [
                None if sample_vs_published or nothing_parsed(entry) else finite_number(read(entry, key))
                for entry in entries
            ]
            stderrs = [stderr_of(entry, key) for entry in entries]
            marks = significance_marks(values, stderrs, bool(_LOWER_IS_BETTER.search(key)))
            marks = [""] * len(marks) if _NO_DIRECTION.match(key) else marks
            cells[key] = [
                interval_cell(interval_of(entry, key), mark)
                for entry, mark in zip(entries, marks, strict=True)
            ]
    rows = [
        [entry.label, *(cells[key][i] if is_interval else read(entry, key) for key, _, is_interval in layout)]
        for i, entry in enumerate(entries)
    ]
    for row in published:
        rows.append(
            [row.row_label, *(None if is_interval else row.values.get(key) for key, _, is_interval in layout)]
        )
    notes = [note] if note else []
    notes += [UNPAIRED_NOTE] if cells else []
    notes += [SAMPLE_CAVEAT] if sample_vs_published else []
    if published:
        sources = "; ".join(dict.fromkeys(str(row.source) for row in published))
        notes.append(
            f"Rows marked '{PUBLISHED_MARK}' are the paper's numbers, copied as data, not produced by a run "
            f"of the pack (source: {sources})."
        )
    return Table(title, ["run / task", *(header for _, header, _ in layout)], rows, " ".join(notes))


def figure(size: tuple[float, float] = WIDE, polar: bool = False) -> tuple[Any, Any]:
    """A new matplotlib figure of a fixed size (Agg backend, imported lazily) and its axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=size, dpi=DPI)
    axes = fig.add_subplot(projection="polar") if polar else fig.add_subplot()
    return fig, axes


def to_plot(fig: Any, title: str, name: str, caption: str = "", legend_height: float = 0.0) -> Plot:
    """Render ``fig`` to PNG bytes at its fixed size and close it (``legend_height``: the bottom share of
    the figure kept free for a figure legend)."""
    import matplotlib.pyplot as plt

    width, height = (round(side * DPI) for side in fig.get_size_inches())
    try:
        fig.tight_layout(rect=(0.0, legend_height, 1.0, 1.0))
    except (ValueError, RuntimeError):  # layout is cosmetic; never lose the plot over it
        pass
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    return Plot(title, name, buffer.getvalue(), width, height, caption)


# Colour, line style and marker per series: 10 colours x 4 line styles x 14 markers, so the 14 VRB
# corruptions (or any 14 runs) each get a combination no other series has, also in grey print.
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
            "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
_LINESTYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">", "p", "h", "8", "d")
LEGEND_WRAP = 48  # characters per legend line: labels are wrapped, never cut
LEGEND_ROW_INCHES = 0.22  # extra figure height per legend row (legends sit below the axes)


def series_style(index: int) -> dict[str, str]:
    """Colour, line style and marker of the ``index``-th series: distinct for the first 40 series."""
    return {
        "color": _COLOURS[index % len(_COLOURS)],
        "linestyle": _LINESTYLES[index % len(_LINESTYLES)],
        "marker": _MARKERS[index % len(_MARKERS)],
    }


def wrap_label(label: str, width: int = LEGEND_WRAP) -> str:
    """A legend label in full, wrapped onto several lines (at ``/``, spaces or anywhere) rather than cut."""
    import textwrap

    return "\n".join(textwrap.wrap(label.replace(" / ", " /\u00a0"), width, break_on_hyphens=False)) or label


def legend_layout(labels: Sequence[str], width_inches: float) -> tuple[int, int]:
    """(columns, rows) of a below-the-axes legend of ``labels`` (wrapped) on a figure that wide."""
    wrapped = [wrap_label(label) for label in labels]
    longest = max((max(len(line) for line in text.split("\n")) for text in wrapped), default=1)
    columns = max(1, min(len(wrapped), int(width_inches * 100 // (longest * 5.2 + 40))))
    rows = 0
    for start in range(0, len(wrapped), columns):
        rows += max(text.count("\n") + 1 for text in wrapped[start : start + columns])
    return columns, rows


def legend_figure(
    labels: Sequence[str], size: tuple[float, float] = WIDE, polar: bool = False
) -> tuple[Any, Any]:
    """A figure ``size`` plus room below for the legend of ``labels`` (height grows by legend rows)."""
    _, rows = legend_layout(labels, size[0]) if labels else (1, 0)
    return figure((size[0], round(size[1] + LEGEND_ROW_INCHES * rows, 2)), polar=polar)


def add_legend(fig: Any, handles: Sequence[Any], labels: Sequence[str]) -> float:
    """The legend below the axes, every label in full (wrapped), in as many columns as fit; returns the
    share of the figure's height it takes (pass it to ``to_plot`` as ``legend_height``)."""
    if not labels:
        return 0.0
    columns, rows = legend_layout(labels, fig.get_size_inches()[0])
    height = fig.get_size_inches()[1]
    reserved = (LEGEND_ROW_INCHES * rows + 0.08) / height
    fig.legend(handles, [wrap_label(label) for label in labels], loc="lower center", ncol=columns,
               fontsize=7, frameon=False, bbox_to_anchor=(0.5, 0.0))  # fmt: skip
    return min(0.7, reserved)


def mark_no_data(axes: Any, values: Iterable[Any]) -> str:
    """Say in the plot when there is nothing to see: "no data" when no value is a number, "every value is 0"
    when all are 0 (bars of height 0 look like an empty frame). Returns the note ("" when there is data)."""
    finite = [number for number in map(finite_number, values) if number is not None]
    if not finite:
        note = "no data (no value is defined)"
    elif all(value == 0 for value in finite):
        note = f"every value is 0 ({len(finite)} value{'s' if len(finite) != 1 else ''})"
    else:
        return ""
    box = {"boxstyle": "round", "facecolor": "#f6f6f6", "edgecolor": "#bbb"}
    axes.text(0.5, 0.5, note, transform=axes.transAxes, ha="center", va="center", fontsize=12,
              color="#555", bbox=box)  # fmt: skip
    return note


def coinciding(series: Mapping[str, tuple[Sequence[float], Sequence[float | None]]]) -> str:
    """A note naming series drawn exactly on top of one another (only the last one drawn is visible)."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for label, (xs, ys) in series.items():
        groups.setdefault((tuple(xs), tuple(ys)), []).append(label)
    same = [labels for labels in groups.values() if len(labels) > 1]
    return "; ".join(f"{', '.join(labels)} coincide (drawn on top of each other)" for labels in same)


def _with_note(caption: str, note: str) -> str:
    if not note:
        return caption
    return f"{caption} Plot: {note}." if caption else f"Plot: {note}."


def grouped_bars(
    title: str,
    name: str,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    ylabel: str,
    caption: str = "",
    errors: Mapping[str, Sequence[tuple[float, float] | None]] | None = None,
    ylim: tuple[float, float] | None = (0.0, 100.0),
    aggregates: int = 0,
) -> Plot:
    """Bars per group (x) for each series (e.g. a run): 'n/a' where an undefined bar would stand, a flat line
    for 0, ``errors`` as (low, high) bars; the last ``aggregates`` groups after a gap and a dashed line."""
    fig, axes = legend_figure(list(series))
    count = max(1, len(series))
    width = 0.8 / count
    split = len(groups) - aggregates
    centres = [group + (0.6 if aggregates and group >= split else 0.0) for group in range(len(groups))]
    handles = []
    for index, (label, values) in enumerate(series.items()):
        xs = [centre + (index - (count - 1) / 2) * width for centre in centres]
        heights = [math.nan if value is None else float(value) for value in values]
        for x, height in zip(xs, heights, strict=True):
            if not math.isfinite(height):
                axes.text(x, 1, "n/a", rotation=90 if count > 3 else 0, ha="center", va="bottom", fontsize=7,
                          color="#666")  # fmt: skip
            elif height == 0:
                axes.hlines(0, x - width / 2, x + width / 2, colors=series_style(index)["color"],
                            linewidth=3, clip_on=False)  # fmt: skip
        bounds = (errors or {}).get(label)
        yerr = None
        if bounds is not None:  # (below, above) the bar; none where the bar or its interval is undefined
            sides = [
                (0.0, 0.0) if b is None or h != h else (max(0.0, h - b[0]), max(0.0, b[1] - h))
                for b, h in zip(bounds, heights, strict=True)
            ]
            yerr = [[below for below, _ in sides], [above for _, above in sides]]
        style = series_style(index)
        handles.append(
            axes.bar(
                xs,
                heights,
                width=width,
                color=style["color"],
                yerr=yerr,
                capsize=2 if yerr else 0,
                hatch=("", "//", "..", "xx")[index // len(_COLOURS) % 4],
            )  # fmt: skip
        )
    note = mark_no_data(axes, [value for values in series.values() for value in values])
    if aggregates and split > 0:
        axes.axvline(split - 0.2, color="#999", linestyle="--", linewidth=1)
    axes.set_xticks(centres)
    if centres:  # every group its slot, an undefined one at either end too
        axes.set_xlim(-0.5, centres[-1] + 0.5)
    tilted = len(groups) > 6
    axes.set_xticklabels(groups, fontsize=8, rotation=30 if tilted else 0, ha="right" if tilted else "center")
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    if ylim is not None:
        axes.set_ylim(*ylim)
    legend_height = add_legend(fig, handles, list(series))
    return to_plot(fig, title, name, _with_note(caption, note), legend_height)


def lines(
    title: str,
    name: str,
    series: Mapping[str, tuple[Sequence[float], Sequence[float | None]]],
    xlabel: str,
    ylabel: str,
    caption: str = "",
    ylim: tuple[float, float] | None = (0.0, 100.0),
    xticks: Sequence[tuple[float, str]] | None = None,
) -> Plot:
    """A line per series, ``series[label] = (xs, ys)`` (None breaks the line); ``xticks``: (position, label)
    pairs, by default every x value present."""
    fig, axes = legend_figure(list(series))
    positions: set[float] = set()
    handles = []
    for index, (xs, ys) in enumerate(series.values()):
        (handle,) = axes.plot(
            list(xs), [math.nan if y is None else y for y in ys], markersize=5, **series_style(index)
        )
        handles.append(handle)
        positions.update(xs)
    note = mark_no_data(axes, [y for _, ys in series.values() for y in ys]) or coinciding(series)
    ticks = list(xticks) if xticks is not None else [(x, fmt(x)) for x in sorted(positions)]
    axes.set_xticks([x for x, _ in ticks])
    axes.set_xticklabels([text for _, text in ticks], fontsize=8)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    if ylim is not None:
        axes.set_ylim(*ylim)
    legend_height = add_legend(fig, handles, list(series))
    return to_plot(fig, title, name, _with_note(caption, note), legend_height)


def generic_section(context: SectionContext) -> list[Block]:
    """The fallback: a table of the benchmark's headline metrics, a row per run and task."""
    headline = list(getattr(context.benchmark, "headline_metrics", ()) or ())
    if not headline:
        keys: list[str] = []
        for entry in context.entries:
            keys.extend(key for key, value in entry.metrics.items() if isinstance(value, (int, float)))
        headline = list(dict.fromkeys(keys))[:8]
    return [metrics_table("Headline metrics", context.entries, [(key, key) for key in headline])]
