"""HallusionBench's published numbers (Guan et al., CVPR 2024) as data: the official README leaderboard,
checked against its excerpt in ``published_source.md``, and the paper's diagnosis rows."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from lmms_eval_tasks.reporting.published import PublishedRow, Source

LEADERBOARD = Source(
    paper="HallusionBench (Guan et al., CVPR 2024)",
    table="official README leaderboard (github.com/tianyi-lab/HallusionBench, commit 744007c)",
    benchmark_version="all 1129 questions (346 images), question pairs and figures as released",
    judge="GPT-4 (the paper's GPT-4-assisted evaluation, 'GPT Eval')",
    checked_against="README leaderboard table",
    excerpt="published_source.md",
)
HUMAN_EVAL = replace(LEADERBOARD, judge="human evaluation ('Human Eval')")
PAPER_DIAGNOSIS = Source(
    paper=LEADERBOARD.paper,
    table="paper's diagnosis and random-chance rows (Pct Diff, FP Ratio, LH/VI/Mixed)",
    benchmark_version=LEADERBOARD.benchmark_version,
    judge="GPT-4",
    unchecked_reason="the paper's text (arXiv 2310.14566) was not available in the sources searched for this "
    "repository, and the README leaderboard has no diagnosis or random-chance rows",
)
COLUMNS = ("qAcc", "fAcc", "easy_aAcc", "hard_aAcc", "aAcc")
HEADLINE = ("qAcc", "fAcc", "aAcc")
# The paper's GPT-4 evaluation asks the judge 3 times per question (the pack's default for an LLM judge):
# a run with fewer repeats is a setting difference in the reproduction verdict.
PAPER_JUDGE_REPEATS = 3
# The README's rows (GPT Eval, and the two human-judged ones): label, the name as printed, then COLUMNS.
LEADERBOARD_FILE = Path(__file__).resolve().parent / "published_leaderboard.csv"


def _rows(evaluation: str, source: Source) -> tuple[PublishedRow, ...]:
    with open(LEADERBOARD_FILE, encoding="utf-8", newline="") as handle:
        table = [row for row in csv.DictReader(handle) if row["evaluation"] == evaluation]
    return tuple(
        PublishedRow(row["label"], {name: float(row[name]) for name in COLUMNS}, source, "hallusionbench",
                     row["printed_as"], HEADLINE)
        for row in table
    )  # fmt: skip


PUBLISHED = (
    *_rows("gpt", LEADERBOARD),
    *_rows("human", HUMAN_EVAL),
    # Not in the README: read from the paper by the project's spec, not checked against a source text here.
    PublishedRow(
        "GPT-4V (diagnosis)",
        {"pct_diff": 0.058, "fp_ratio": 0.58, "LH": 22.19, "VI": 45.66, "Mixed": 32.14},
        PAPER_DIAGNOSIS,
        "hallusionbench",
        headline=("pct_diff", "fp_ratio"),
    ),
    PublishedRow(
        "Random chance", {"qAcc": 15.60, "fAcc": 18.21, "aAcc": 45.96}, PAPER_DIAGNOSIS, "hallusionbench"
    ),
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs
    (beyond the deviations its report records)."""
    reasons = []
    if "vlmevalkit" in task:
        reasons.append(
            "question set: the 951 image questions of the VLMEvalKit/host variant, not the paper's 1129 "
            "(its 178 no-image questions are left out)"
        )
    if "offline" in task:
        reasons.append("judge: the offline rule-based yes/no judge, not the paper's GPT-4")
    return PUBLISHED, reasons


def setting_reasons(settings: Mapping[str, Any]) -> list[str]:
    """Why a run's recorded scoring settings differ from the paper's (``verdict_parse``, ``no_verdict``)."""
    options = {**settings, **(settings.get("score_options") or {})}
    reasons = []
    verdict_parse = options.get("verdict_parse") or "final"
    if verdict_parse != "official":
        reasons.append(
            f"verdict parsing: {verdict_parse}, not the official label rule (the model's quoted text is "
            "masked and content-free answers are rejected without the judge; -o verdict_parse=official)"
        )
    no_verdict = options.get("no_verdict") or "official"
    if no_verdict != "official":
        reasons.append(f"no-verdict rule: {no_verdict}, not the official code's")
    return reasons
