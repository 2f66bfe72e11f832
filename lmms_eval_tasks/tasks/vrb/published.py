"""VRB's published numbers (Ishmam et al., WACV 2025) as data: ViLT, BLIP, VLE and PNP transcribed in
``published_source.md`` (a test checks them), LLaVA-1.5's clean accuracies from the specification."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lmms_eval_tasks.reporting.published import PublishedRow, Source

PAPER = "Visual Robustness Benchmark for VQA (Ishmam et al., WACV 2025, arXiv 2407.03386)"
SUBSET = "the paper's unpublished random 3,000-image / ~16,000-question VQAv2 subset"
REPOSITORY_TABLE = Source(
    paper=PAPER,
    table="the paper's accuracy table as an image in the official repository: "
    "github.com/ishmamt/VQA-Visual-Robustness-Benchmark, commit 1c1d3b9, assets/results1.png, columns "
    "A_{v,0} (clean), A_v (mean over corruptions and levels 0-5) and A^rel_v (%)",
    benchmark_version=SUBSET,
    checked_against="official repository image of the accuracy table",
    excerpt="published_source.md",
)
SPECIFICATION = Source(
    paper=PAPER,
    table="the paper's clean accuracy of the MLLMs (fractions; table number not checked)",
    benchmark_version=SUBSET,
    unchecked_reason="the paper's text (arXiv 2407.03386) was not available in the sources searched for this "
    "repository, and the official repository's table image has only ViLT, BLIP, VLE and PNP",
)
# (model, A_{v,0} clean accuracy, A_v mean accuracy, A^rel_v relative drop as printed in percent)
_TABLE = (
    ("ViLT", 0.713, 0.657, 7.85),
    ("BLIP", 0.782, 0.710, 9.21),
    ("VLE", 0.771, 0.693, 10.21),
    ("PNP", 0.648, 0.446, 31.17),
)
PUBLISHED = (
    *(
        PublishedRow(
            model,
            # the pack's relative drop is a fraction: the printed percent / 100, digits unchanged
            {
                "accuracy_clean": clean,
                "accuracy_average": average,
                "relative_accuracy_drop": round(drop / 100, 4),
            },
            REPOSITORY_TABLE,
            "vrb",
            headline=("accuracy_clean",),
        )
        for model, clean, average, drop in _TABLE
    ),
    *(
        PublishedRow(model, {"accuracy_clean": value}, SPECIFICATION, "vrb")
        for model, value in (("LLaVA-1.5-7B", 0.783), ("LLaVA-1.5-13B", 0.798))
    ),
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs."""
    return PUBLISHED, [
        "question set: the paper's subset was never published; the pack draws its own seeded subset"
    ]


def setting_reasons(settings: Mapping[str, Any]) -> list[str]:
    """Why a run's recorded settings differ from the paper's: an accuracy protocol other than the paper's
    Eq. 2 (``paper``), or a corruption profile other than the official generator's (docs/vrb.md)."""
    options = settings.get("score_options") or {}
    reasons = []
    protocol = options.get("protocol") or settings.get("protocol") or "paper"
    if protocol != "paper":
        reasons.append(f"protocol: {protocol}, not the paper's VQA accuracy (Eq. 2, protocol=paper)")
    profile = settings.get("profile")
    if profile and profile not in ("vrb", "vrb_official"):
        reasons.append(f"corruption profile: {profile}, not the official generator's (vrb, vrb_official)")
    return reasons
