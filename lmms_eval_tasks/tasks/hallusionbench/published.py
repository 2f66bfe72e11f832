"""HallusionBench's published numbers (Guan et al., CVPR 2024) as data: the official README leaderboard,
checked against its excerpt in ``published_source.md``, and the paper's diagnosis rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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
# (label, printed as, question-pair, figure, easy question, hard question, question accuracy), GPT Eval rows.
_GPT_EVAL = (
    ("GPT-4V", "GPT4V", 28.79, 39.88, 75.60, 37.67, 65.28),
    ("Claude 3", "Claude 3", 21.76, 28.61, 55.16, 41.40, 56.86),
    # The README prints "LLaVA-1.5"; the paper's model is the 13B checkpoint.
    ("LLaVA-1.5-13B", "LLaVA-1.5", 10.55, 24.86, 49.67, 29.77, 46.94),
    ("Gemini Pro Vision", "Gemini Pro Vision", 7.69, 8.67, 35.60, 30.23, 36.85),
    ("GUA_VL", "GUA_VL", 16.70, 23.12, 53.63, 39.77, 51.82),
    ("BLIP2-T5", "BLIP2-T5", 15.16, 20.52, 45.49, 43.49, 48.09),
    ("Qwen-VL", "Qwen-VL", 5.93, 6.65, 31.43, 24.88, 39.15),
    ("Open-Flamingo", "Open-Flamingo", 6.37, 11.27, 39.56, 27.21, 38.44),
    ("MiniGPT5", "MiniGPT5", 10.55, 9.83, 36.04, 28.37, 40.30),
    ("MiniGPT4", "MiniGPT4", 8.79, 10.12, 31.87, 27.67, 35.78),
    ("InstructBLIP", "InstructBLIP", 9.45, 10.11, 35.60, 45.12, 45.26),
    ("BLIP2", "BLIP2", 5.05, 12.43, 33.85, 40.70, 40.48),
    ("mPLUG_Owl-v2", "mPLUG_Owl-v2", 13.85, 19.94, 44.84, 39.07, 47.30),
    ("mPLUG_Owl-v1", "mPLUG_Owl-v1", 9.45, 10.40, 39.34, 29.77, 43.93),
    ("LRV_Instruction", "LRV_Instruction", 8.79, 13.01, 39.78, 27.44, 42.78),
    ("ViLT", "ViLT", 8.3516, 11.2717, 37.8022, 45.3488, 44.4641),
    ("GiT", "GiT", 5.27, 6.36, 26.81, 31.86, 34.37),
)
_HUMAN_EVAL = (
    ("GPT-4V (human eval)", "GPT4V", 31.42, 44.22, 79.56, 38.37, 67.58),
    ("LLaVA-1.5-13B (human eval)", "LLaVA-1.5", 9.45, 25.43, 50.77, 29.07, 47.12),
)


def _rows(table: tuple, source: Source) -> tuple[PublishedRow, ...]:
    return tuple(
        PublishedRow(
            label, dict(zip(COLUMNS, values, strict=True)), source, "hallusionbench", printed, HEADLINE
        )
        for label, printed, *values in table
    )


PUBLISHED = (
    *_rows(_GPT_EVAL, LEADERBOARD),
    *_rows(_HUMAN_EVAL, HUMAN_EVAL),
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
