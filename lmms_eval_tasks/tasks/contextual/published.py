"""ConTextual's published numbers (Wadhawan et al., ICML 2024): the official README leaderboard's acceptance
rates in percent (GPT-4 judge); rows dated 2024-01-24 are the paper's models (excerpt: published_source.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_eval_tasks.reporting.published import PublishedRow, Source
from lmms_eval_tasks.tasks.contextual.scoring import SCENARIOS


def _source(date: str, split: str = "test") -> Source:
    origin = "the paper's models" if date == "2024-01-24" else "added to the leaderboard after the paper"
    table = "Test (Overall)" if split == "test" else "Val subset"
    return Source(
        paper="ConTextual (Wadhawan et al., ICML 2024)",
        table=f"official README leaderboard, {table} table (github.com/rohan598/ConTextual, commit "
        f"6989ad5), dated {date}: {origin}",
        benchmark_version="test, all 506 instructions" if split == "test" else "validation, 100 instructions",
        judge="GPT-4 (text-only, the paper's prompt)",
        checked_against="README leaderboard table",
        excerpt="published_source.md",
    )


COLUMNS = ("acceptance_rate", *(f"acceptance_rate_{scenario}" for scenario in SCENARIOS))
HEADLINE = ("acceptance_rate",)
# The leaderboard's GPT-4 evaluation asks the judge once per instruction (the official scripts' protocol).
PAPER_JUDGE_REPEATS = 1
_OCR_CAPTION = "GPT-4 w/ Layout-aware OCR + Caption"
# (label, printed as, date, ALL, Time, Shop, Nav, Abs, App, Web, Info, Misc NS)
_TEST = (
    ("Humans", "Human Performance\\*", "2024-01-24", 69.6, 64.0, 64.0, 73.5, 75.5, 64.0, 58.0, 72.0, 78.0),
    ("GPT-4o", "GPT-4o", "2024-05-18", 62.8, 32.0, 70.0, 60.0, 98.0, 72.0, 62.0, 48.0, 64.7),
    ("GPT-4o-mini-2024-07-18", "", "2024-07-18", 61.7, 22.0, 62.0, 62.0, 98.0, 72.0, 64.0, 42.0, 67.3),
    ("Claude-3.5-Sonnet-2024-06-20", "", "2024-07-18", 57.5, 22.0, 52.0, 66.0, 96.0, 68.0, 64.0, 44.0, 56.7),
    ("Gemini-1.5-Flash-Preview-0514", "", "2024-05-18", 56.0, 30.0, 51.0, 52.1, 84.0, 63.0, 63.2, 42.8, 61.7),
    ("Gemini-1.5-Pro-Preview-0514", "", "2024-05-18", 52.4, 24.0, 46.9, 39.6, 84.0, 45.8, 59.2, 43.8, 64.0),
    ("GPT-4V", "GPT-4V(ision)", "2024-01-24", 47.4, 18.0, 54.0, 48.0, 100.0, 48.0, 42.0, 28.0, 48.0),
    ("Gemini-Pro-Vision", "", "2024-01-24", 40.2, 16.0, 32.7, 28.6, 65.3, 44.9, 43.8, 20.0, 52.8),
    ("Claude-3-Opus-2024-02-29", "", "2024-03-05", 38.1, 18.0, 32.0, 34.0, 68.0, 44.0, 38.0, 18.0, 44.7),
    ("LLaVA-NeXT-34B", "LLaVA-Next-34B", "2024-03-05", 36.8, 10.0, 30.6, 36.0, 66.0, 36.0, 28.0, 12.0, 51.3),
    ("LLaVA-NeXT-13B", "LLaVA-Next-13B", "2024-03-05", 30.3, 0.0, 28.6, 32.0, 60.0, 18.0, 32.0, 10.0, 40.4),
    ("ShareGPT-4V-7B", "", "2024-01-24", 22.6, 0.0, 16.0, 20.0, 28.6, 20.0, 20.0, 14.0, 37.7),
    (_OCR_CAPTION, "", "2024-01-24", 22.2, 6.0, 16.0, 24.0, 57.1, 14.0, 18.0, 8.0, 27.3),
    ("Qwen-VL", "", "2024-01-24", 21.8, 4.0, 20.0, 24.0, 53.1, 6.0, 18.0, 14.0, 27.3),
    ("LLaVA-1.5-13B", "LLaVA-1.5B-13B", "2024-01-24", 20.8, 4.0, 10.0, 18.0, 44.9, 16.0, 26.0, 4.0, 29.7),
    ("mPLUG-Owl-v2-7B", "", "2024-01-24", 18.6, 4.0, 8.0, 24.0, 32.7, 20.0, 10.0, 12.0, 26.0),
    ("GPT-4 w/ Layout-aware OCR", "", "2024-01-24", 18.2, 8.0, 20.0, 18.0, 34.7, 10.0, 16.0, 16.0, 20.7),
    ("GPT-4 w/ OCR", "", "2024-01-24", 15.9, 4.0, 10.0, 14.0, 30.6, 8.0, 16.0, 28.6, 16.9),
    ("LLaVAR-13B", "", "2024-01-24", 14.9, 10.0, 16.0, 6.0, 44.9, 8.0, 10.0, 6.0, 16.7),
    ("BLIVA", "", "2024-01-24", 10.3, 2.0, 4.0, 14.0, 24.5, 4.0, 8.0, 4.0, 14.7),
    ("InstructBLIP-Vicuna-7B", "", "2024-01-24", 9.7, 2.0, 4.0, 16.0, 20.0, 6.0, 12.0, 2.1, 12.0),
    ("Idefics-9B", "", "2024-01-24", 7.7, 4.0, 2.0, 12.0, 12.0, 0.0, 6.0, 2.0, 13.3),
)
_VAL = (
    ("Humans", "Human Performance\\*", "2024-01-24", 72.0, 90.0, 90.0, 70.0, 70.0, 60.0, 50.0, 80.0, 70.0),
    ("GPT-4V", "GPT-4V(ision)", "2024-01-24", 53.0, 40.0, 60.0, 50.0, 100.0, 50.0, 30.0, 30.0, 56.7),
    ("Gemini-Pro-Vision", "", "2024-01-24", 37.8, 20.0, 30.0, 10.0, 80.0, 44.4, 30.0, 20.0, 46.7),
    (_OCR_CAPTION, "", "2024-01-24", 23.0, 10.0, 10.0, 40.0, 60.0, 0.0, 10.0, 20.0, 26.7),
    ("ShareGPT-4V-7B", "", "2024-01-24", 17.0, 0.0, 30.0, 10.0, 30.0, 10.0, 10.0, 0.0, 26.7),
    ("LLaVA-1.5-13B", "LLaVA-1.5B-13B", "2024-01-24", 16.0, 0.0, 10.0, 10.0, 50.0, 10.0, 20.0, 10.0, 16.7),
)
# The pack's ``contextual_test`` runs the 506 test instructions; ``contextual`` the 100 validation ones.
PUBLISHED = tuple(
    PublishedRow(
        label, dict(zip(COLUMNS, values, strict=True)), _source(date), "contextual_test", printed, HEADLINE
    )
    for label, printed, date, *values in _TEST
)
PUBLISHED_VALIDATION = tuple(
    PublishedRow(
        label, dict(zip(COLUMNS, values, strict=True)), _source(date, "val"), "contextual", printed, HEADLINE
    )
    for label, printed, date, *values in _VAL
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs
    (beyond the deviations its report records)."""
    if task.startswith("contextual_test"):
        return PUBLISHED, []
    if task == "contextual":
        return PUBLISHED_VALIDATION, []
    if task == "contextual_offline":
        return PUBLISHED_VALIDATION, [
            "judge: contextual_offline is scored by the offline rule judge, not the GPT-4 judge of the "
            "compared rows"
        ]
    return PUBLISHED_VALIDATION, [
        f"question set: {task} is not the 100-instruction validation set the compared rows were measured on"
    ]


def setting_reasons(settings: Mapping[str, Any]) -> list[str]:
    """Why a run's recorded scoring settings differ from the leaderboard's: a protocol other than the
    official scripts' (docs/contextual.md, "Differences from the official code")."""
    options = settings.get("score_options") or {}
    protocol = options.get("protocol") or settings.get("protocol") or "default"
    if protocol == "official":
        return []
    return [
        f"protocol: {protocol}, not the official scripts' (verdict parsing and the Misc. Natural Scenes "
        "denominator differ; -o protocol=official reproduces them)"
    ]
