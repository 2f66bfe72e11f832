"""TallyQA's report section: simple/complex accuracy and RMSE, accuracy vs true count."""

from __future__ import annotations

import re

from lmms_eval_tasks.reporting.sections import (
    Block,
    SectionContext,
    Table,
    Text,
    lines,
    metrics_table,
)
from lmms_eval_tasks.tasks.revisiting.scoring import BUCKETS
from lmms_eval_tasks.tasks.tallyqa.published import PUBLISHED

SPLITS = ("simple", "complex")
MAIN_COLUMNS = tuple(
    (f"{split}_{key}", f"{split} {header}")
    for split in SPLITS
    for key, header in (
        ("micro_accuracy", "micro"),
        ("macro_accuracy", "macro"),
        ("rmse", "RMSE"),
        ("mse", "MSE (official)"),
        ("unparsed", "unparsed"),
    )
)
BUCKET_COLUMNS = tuple(
    (f"{split}_accuracy_bucket_{bucket}", f"{split} {bucket}") for split in SPLITS for bucket in BUCKETS
)


def counts_of(metrics: dict, split: str) -> list[int]:
    """True counts with an accuracy in the report for ``split``, ascending."""
    pattern = re.compile(rf"^{split}_accuracy_count_(\d+)$")
    return sorted(int(match.group(1)) for key in metrics if (match := pattern.match(key)))


def render(context: SectionContext) -> list[Block]:
    """Main table with the paper's row, per-bucket table, accuracy-vs-count plot per split."""
    entries = context.entries
    blocks: list[Block] = [
        Text(
            "Accuracy in percent. RMSE is the true root mean squared error of predictions "
            "clipped to [0, 15]; "
            "the paper's 'RMSE' is the official script's mean squared error (MSE column, official protocol)."
        ),
        metrics_table("Main results, a row per run", entries, MAIN_COLUMNS, PUBLISHED),
        metrics_table("Accuracy per answer bucket", entries, BUCKET_COLUMNS),
    ]
    for split in SPLITS:
        series = {}
        for entry in entries:
            counts = counts_of(entry.metrics, split)
            if counts:
                series[entry.label] = (
                    counts,
                    [entry.metrics.get(f"{split}_accuracy_count_{c}") for c in counts],
                )
        if series:
            name = context.plot_name(f"accuracy_by_count_{split}")
            title = f"TallyQA {split}: accuracy vs true count"
            blocks.append(lines(title, name, series, "true count", "accuracy %"))
    for entry in entries:
        get = entry.metrics.get
        rows = [
            [split, count, get(f"{split}_accuracy_count_{count}"), get(f"{split}_questions_count_{count}")]
            for split in SPLITS
            for count in counts_of(entry.metrics, split)
        ]
        if rows:
            headers = ["split", "true count", "accuracy", "questions"]
            blocks.append(Table(f"Accuracy vs true count: {entry.label}", headers, rows))
    return blocks
