"""The one interface through which a benchmark contributes its section to ``lmms-eval-tasks report``.

A benchmark names ``report_section="module:render"`` in its registry entry; ``render(context)`` receives a
``SectionContext`` (the benchmark, and one ``Entry`` per run and top-level task or group of that benchmark)
and returns a list of blocks (``Table``, ``Plot``, ``Text``). The report code only lays the blocks out as
HTML and Markdown; a benchmark without a section gets ``generic_section`` (its headline metrics).
Helpers here (number formatting, per-run tables with published rows, fixed-size matplotlib figures) keep
each section module short.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# Every plot is drawn at a fixed size (inches x DPI, no tight bounding box), so its PNG has a known size.
DPI = 100
WIDE = (7.2, 4.0)  # 720 x 400 px
SQUARE = (6.0, 6.0)  # 600 x 600 px
PUBLISHED_MARK = "published, not re-run"


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
    plot_prefix: str = ""

    def plot_name(self, name: str) -> str:
        """A file name for a plot, unique within the report (``<benchmark>_<name>.png``)."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")
        return f"{self.plot_prefix or self.benchmark.name}_{safe}.png"


@dataclass(frozen=True)
class PublishedRow:
    """A row of reference numbers copied from a paper (never re-run by the pack), with its source."""

    label: str
    values: Mapping[str, float]
    source: str

    @property
    def row_label(self) -> str:
        return f"{self.label} ({PUBLISHED_MARK})"


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
    f"CI: the 95% interval of the run's number (its standard error's method and unit: docs/uncertainty.md). "
    f"'best' marks the best run per column, '{NOT_SIGNIFICANT}' a run whose difference from it is not "
    f"significant at 95%: |difference| < {Z_95:.2f} x sqrt(se_a^2 + se_b^2), the standard error of the "
    "difference of two independent runs (not overlapping intervals, which is no test). Runs on the same "
    "questions are positively correlated, so this unpaired test is conservative; `lmms-eval-tasks compare` "
    "gives the paired test."
)


def uncertainty_of(entry: Entry, key: str) -> dict[str, Any] | None:
    """The run's ``details.uncertainty[key]`` block (estimate, stderr, low, high, ...), or None."""
    block = entry.details.get("uncertainty")
    value = block.get(key) if isinstance(block, Mapping) else None
    return value if isinstance(value, Mapping) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def stderr_of(entry: Entry, key: str) -> float | None:
    """The standard error of ``key``: the ``<key>_stderr`` metric, else the uncertainty block's."""
    value = _number(entry.metrics.get(f"{key}_stderr"))
    if value is None:
        value = _number((uncertainty_of(entry, key) or {}).get("stderr"))
    return value


def interval_of(entry: Entry, key: str) -> tuple[float, float] | None:
    """The 95% interval (low, high) of ``key`` from the uncertainty block, or None."""
    block = uncertainty_of(entry, key) or {}
    low, high = _number(block.get("low")), _number(block.get("high"))
    return None if low is None or high is None else (low, high)


def interval_errors(
    entries: Sequence[Entry], keys: Sequence[str]
) -> dict[str, list[tuple[float, float] | None]]:
    """``grouped_bars`` error bars: per entry label, the interval of each key (None where absent)."""
    return {entry.label: [interval_of(entry, key) for key in keys] for entry in entries}


def significance_marks(
    values: Sequence[float | None], stderrs: Sequence[float | None], lower_is_better: bool = False
) -> list[str]:
    """Per run: 'best', NOT_SIGNIFICANT (|x - best| < 1.96 sqrt(se^2 + se_best^2)) or '' (significantly
    different, or no standard error to tell); all '' with fewer than two runs that have a value."""
    present = [i for i, value in enumerate(values) if value is not None]
    if len(present) < 2:
        return [""] * len(values)
    best = (min if lower_is_better else max)(present, key=lambda i: values[i])
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


def metrics_table(
    title: str,
    entries: Sequence[Entry],
    columns: Sequence[tuple[str, str]],
    published: Iterable[PublishedRow] = (),
    note: str = "",
    value: Callable[[Entry, str], Any] | None = None,
    intervals: bool = True,
) -> Table:
    """A row per entry (``run / task``) with ``columns`` = (metric key, header), then the published rows.

    With ``intervals``, a metric some run has a 95% interval for (``details.uncertainty``) gets a
    ``<header> 95% CI`` column after it, with the significance marks of ``significance_marks``.
    """
    read = value or (lambda entry, key: entry.metrics.get(key))
    layout: list[tuple[str, str, bool]] = []
    for key, header in columns:
        layout.append((key, header, False))
        if intervals and any(interval_of(entry, key) is not None for entry in entries):
            layout.append((key, f"{header} 95% CI", True))
    cells: dict[str, list[str]] = {}
    for key, _, is_interval in layout:
        if is_interval:
            values = [_number(read(entry, key)) for entry in entries]
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
    published = list(published)
    for row in published:
        rows.append(
            [row.row_label, *(None if is_interval else row.values.get(key) for key, _, is_interval in layout)]
        )
    if cells:
        note = (note + " " if note else "") + UNPAIRED_NOTE
    if published:
        sources = "; ".join(dict.fromkeys(row.source for row in published))
        note = (note + " " if note else "") + (
            f"Rows marked '{PUBLISHED_MARK}' are the paper's numbers, copied as data, not produced by a run "
            f"of the pack (source: {sources})."
        )
    return Table(title, ["run / task", *(header for _, header, _ in layout)], rows, note)


def figure(size: tuple[float, float] = WIDE, polar: bool = False) -> tuple[Any, Any]:
    """A new matplotlib figure of a fixed size (Agg backend, imported lazily) and its axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=size, dpi=DPI)
    axes = fig.add_subplot(projection="polar") if polar else fig.add_subplot()
    return fig, axes


def to_plot(fig: Any, title: str, name: str, caption: str = "") -> Plot:
    """Render ``fig`` to PNG bytes at its fixed size and close it."""
    import matplotlib.pyplot as plt

    width, height = (round(side * DPI) for side in fig.get_size_inches())
    try:
        fig.tight_layout()
    except (ValueError, RuntimeError):  # layout is cosmetic; never lose the plot over it
        pass
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    return Plot(title, name, buffer.getvalue(), width, height, caption)


def grouped_bars(
    title: str,
    name: str,
    groups: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    ylabel: str,
    caption: str = "",
    errors: Mapping[str, Sequence[tuple[float, float] | None]] | None = None,
    ylim: tuple[float, float] | None = (0.0, 100.0),
) -> Plot:
    """Bars per group (x) for each series (a colour per series, e.g. a run); None values draw nothing.
    ``errors`` maps a series to (low, high) interval bounds per group, drawn as error bars."""
    fig, axes = figure()
    count = max(1, len(series))
    width = 0.8 / count
    for index, (label, values) in enumerate(series.items()):
        xs = [group + (index - (count - 1) / 2) * width for group in range(len(groups))]
        heights = [math.nan if value is None else float(value) for value in values]
        bounds = (errors or {}).get(label)
        yerr = None
        if bounds is not None:
            lows = [
                0.0 if b is None or h != h else max(0.0, h - b[0])
                for b, h in zip(bounds, heights, strict=True)
            ]
            highs = [
                0.0 if b is None or h != h else max(0.0, b[1] - h)
                for b, h in zip(bounds, heights, strict=True)
            ]
            yerr = [lows, highs]
        axes.bar(xs, heights, width=width, label=_short(label), yerr=yerr, capsize=2 if yerr else 0)
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels(groups, fontsize=8, rotation=20 if len(groups) > 6 else 0)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    if ylim is not None:
        axes.set_ylim(*ylim)
    if len(series) <= 12:
        axes.legend(fontsize=6)
    return to_plot(fig, title, name, caption)


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
    """A line per series: ``series[label] = (xs, ys)``; None values break the line. ``xticks``: (position,
    label) pairs; by default every x value present gets a tick."""
    fig, axes = figure()
    positions: set[float] = set()
    for label, (xs, ys) in series.items():
        axes.plot(list(xs), [math.nan if y is None else y for y in ys], marker="o", label=_short(label))
        positions.update(xs)
    ticks = list(xticks) if xticks is not None else [(x, fmt(x)) for x in sorted(positions)]
    axes.set_xticks([x for x, _ in ticks])
    axes.set_xticklabels([text for _, text in ticks], fontsize=8)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    if ylim is not None:
        axes.set_ylim(*ylim)
    if len(series) <= 12:
        axes.legend(fontsize=6)
    return to_plot(fig, title, name, caption)


def _short(label: str, limit: int = 40) -> str:
    return label if len(label) <= limit else label[: limit - 3] + "..."


def generic_section(context: SectionContext) -> list[Block]:
    """The fallback: a table of the benchmark's headline metrics, a row per run and task."""
    headline = list(getattr(context.benchmark, "headline_metrics", ()) or ())
    if not headline:
        keys: list[str] = []
        for entry in context.entries:
            keys.extend(key for key, value in entry.metrics.items() if isinstance(value, (int, float)))
        headline = list(dict.fromkeys(keys))[:8]
    return [metrics_table("Headline metrics", context.entries, [(key, key) for key in headline])]


def wilson_interval(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a proportion, as fractions; None when there are no trials."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
