"""How sure is each number: standard errors, 95% intervals and paired tests for the pack's metrics (pure,
seeded; each scorer gives its ``Resampling``; docs/uncertainty.md)."""

from __future__ import annotations

from lmms_eval_tasks.uncertainty.analytic import (
    mean_uncertainty,
    nanmean,
    normal_interval,
    ratio_uncertainty,
    wilson_interval,
    z_value,
)
from lmms_eval_tasks.uncertainty.bootstrap import (
    bootstrap_counts,
    bootstrap_indices,
    bootstrap_mean,
    cluster_bootstrap,
    cluster_totals,
    factorize,
    loop_bootstrap,
    paired_bootstrap,
)
from lmms_eval_tasks.uncertainty.mcnemar import VARIANTS, discordant_counts, mcnemar
from lmms_eval_tasks.uncertainty.resampling import Resampling
from lmms_eval_tasks.uncertainty.result import Difference, McNemar, Uncertainty

__all__ = [
    "Resampling",
    "VARIANTS",
    "Difference",
    "McNemar",
    "Uncertainty",
    "bootstrap_counts",
    "bootstrap_indices",
    "bootstrap_mean",
    "cluster_bootstrap",
    "cluster_totals",
    "discordant_counts",
    "factorize",
    "loop_bootstrap",
    "mcnemar",
    "mean_uncertainty",
    "nanmean",
    "normal_interval",
    "paired_bootstrap",
    "ratio_uncertainty",
    "wilson_interval",
    "z_value",
]
