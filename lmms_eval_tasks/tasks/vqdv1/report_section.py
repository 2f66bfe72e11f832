"""VQDv1's report section: micro/macro F1, precision and recall vs ground-truth box count."""

from __future__ import annotations

from lmms_eval_tasks.reporting.sections import (
    Block,
    SectionContext,
    Table,
    Text,
    lines,
    metrics_table,
)
from lmms_eval_tasks.tasks.revisiting.scoring import BUCKETS
from lmms_eval_tasks.tasks.vqdv1.published import PUBLISHED

BUCKET_KEYS = ("precision", "recall", "f1", "queries", "gt_boxes", "predicted_boxes", "true_positives")
BUCKET_HEADERS = ["boxes", "precision", "recall", "F1", "queries", "gt boxes", "predicted", "TP"]
MAIN_COLUMNS = (
    ("micro_f1", "micro F1"),
    ("macro_f1", "macro F1"),
    ("queries", "queries"),
    ("unparsed", "unparsed"),
)


def render(context: SectionContext) -> list[Block]:
    """Main table with the paper's rows (official protocol numbers), per-bucket tables and the P/R plot."""
    entries = context.entries
    blocks: list[Block] = [
        Text(
            "F1, precision and recall in percent, by number of ground-truth boxes. The paper's numbers come "
            "from the official script (capped F1, swapped labels): compare them with a run using "
            "protocol=official."
        ),
        metrics_table("Main results, a row per run", entries, MAIN_COLUMNS, PUBLISHED),
    ]
    series = {}
    for entry in entries:
        present = [b for b in BUCKETS if f"queries_{b}" in entry.metrics]
        if present:
            xs = [BUCKETS.index(b) for b in present]
            series[f"precision: {entry.label}"] = (xs, [entry.metrics.get(f"precision_{b}") for b in present])
            series[f"recall: {entry.label}"] = (xs, [entry.metrics.get(f"recall_{b}") for b in present])
            rows = [[b, *(entry.metrics.get(f"{key}_{b}") for key in BUCKET_KEYS)] for b in present]
            blocks.append(Table(f"Per box-count bucket: {entry.label}", BUCKET_HEADERS, rows))
    if series:
        title, ticks = "VQDv1 precision and recall vs ground-truth box count", list(enumerate(BUCKETS))
        name = context.plot_name("precision_recall")
        blocks.insert(2, lines(title, name, series, "ground-truth boxes", "%", xticks=ticks))
    return blocks
