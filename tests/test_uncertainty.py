"""The uncertainty engine against numbers computed by hand on small crafted inputs (arithmetic inline)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lmms_eval_tasks.uncertainty.analytic import (
    mean_uncertainty,
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
    factorize,
    loop_bootstrap,
    paired_bootstrap,
)
from lmms_eval_tasks.uncertainty.mcnemar import discordant_counts, mcnemar
from lmms_eval_tasks.uncertainty.result import Difference, Uncertainty

Z95 = 1.959963984540054  # NormalDist().inv_cdf(0.975)


# --- the resampling machinery ----------------------------------------------------------------------------


def test_factorize_sorts_units_for_arrays_and_sequences() -> None:
    codes, labels = factorize(np.array([30, 10, 30, 20]))
    assert codes.tolist() == [2, 0, 2, 1] and labels == [10, 20, 30]
    codes, labels = factorize([("VS", "0"), ("VD", "1"), ("VS", "0")])
    assert codes.tolist() == [1, 0, 1] and labels == [("VD", "1"), ("VS", "0")]


def test_the_bootstrap_does_not_depend_on_the_order_records_arrive_in() -> None:
    """Two processes deliver the same records in another order (accelerate shards): same interval."""
    rng = np.random.default_rng(5)
    clusters = [f"q{i % 40}" for i in range(200)]
    values = rng.integers(0, 2, size=200).astype(float)
    order = rng.permutation(200)
    first = bootstrap_mean(values, clusters, n_resamples=300, seed=2)
    shuffled = bootstrap_mean(values[order], [clusters[i] for i in order], n_resamples=300, seed=2)
    assert (first.stderr, first.low, first.high) == pytest.approx(
        (shuffled.stderr, shuffled.low, shuffled.high)
    )


def test_counts_are_the_drawn_indices_and_rows_sum_to_k() -> None:
    indices = bootstrap_indices(5, n_resamples=7, seed=3)
    counts = bootstrap_counts(5, n_resamples=7, seed=3)
    assert indices.shape == (7, 5) and counts.shape == (7, 5)
    for row, drawn in zip(counts, indices, strict=True):
        assert row.tolist() == np.bincount(drawn, minlength=5).tolist()
    assert counts.sum(axis=1).tolist() == [5.0] * 7
    # the same stream as one Generator(PCG64(seed)).integers call
    expected = np.random.Generator(np.random.PCG64(3)).integers(0, 5, size=(7, 5))
    assert (indices == expected).all()


def test_blocks_give_the_same_draws_as_one_call(monkeypatch) -> None:
    import lmms_eval_tasks.uncertainty.bootstrap as bootstrap

    whole = bootstrap_indices(50, n_resamples=40, seed=9)
    monkeypatch.setattr(bootstrap, "_BLOCK_ELEMENTS", 50 * 3)  # blocks of 3 resamples
    assert (bootstrap_indices(50, n_resamples=40, seed=9) == whole).all()


def test_seed_reproduces_exactly_and_another_seed_differs() -> None:
    values = np.array([1, 0, 1, 1, 0, 1, 0, 0, 1, 1] * 5, dtype=float)
    first = bootstrap_mean(values, seed=11).as_dict()
    again = bootstrap_mean(values, seed=11).as_dict()
    other = bootstrap_mean(values, seed=12).as_dict()
    assert first == again
    assert first["stderr"] != other["stderr"]
    assert first["seed"] == 11 and first["n_resamples"] == 1000 and first["method"] == "bootstrap"


def test_vectorised_paths_equal_the_python_loop_on_the_same_seed() -> None:
    # 12 rows in 4 clusters of unequal size; a ratio of sums and a non-linear function of it
    clusters = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 3])
    correct = np.array([1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1], dtype=float)
    rows = np.column_stack([correct, np.ones_like(correct)])

    def sums(totals):
        accuracy = totals[:, 0] / totals[:, 1]
        return {"accuracy": accuracy, "odds": accuracy / (1 - accuracy)}

    def loop(indices):
        accuracy = correct[indices].mean()
        return {"accuracy": accuracy, "odds": accuracy / (1 - accuracy)}

    per_cluster = np.bincount(clusters, weights=correct), np.bincount(clusters)

    def counts_path(counts):
        accuracy = counts @ per_cluster[0] / (counts @ per_cluster[1])
        return {"accuracy": accuracy, "odds": accuracy / (1 - accuracy)}

    vectorised = cluster_bootstrap(sums, clusters, rows, n_resamples=300, seed=5)
    by_counts = cluster_bootstrap(counts_path, clusters, n_resamples=300, seed=5)
    looped = loop_bootstrap(loop, clusters, n_resamples=300, seed=5)
    for name in ("accuracy", "odds"):
        for other in (by_counts, looped):
            a, b = vectorised[name].as_dict(), other[name].as_dict()
            for key in ("estimate", "stderr", "low", "high"):
                if a[key] is None:
                    assert b[key] is None
                else:
                    assert a[key] == pytest.approx(b[key], rel=1e-12)
            assert a["undefined_resamples"] == b["undefined_resamples"]
    # estimate on the data: 7 correct of 12
    assert vectorised["accuracy"].estimate == pytest.approx(7 / 12)


def test_cells_axis_gives_per_level_totals() -> None:
    # 2 images x 2 levels; image "x": level 0 correct, level 1 wrong; image "y": both correct.
    clusters = ["x", "x", "y", "y"]
    level = [0, 1, 0, 1]
    correct = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]])  # (correct, count)
    seen = {}

    def statistic(totals):
        seen["shape"] = totals.shape
        accuracy = totals[..., 0] / totals[..., 1]  # [R, level]
        return {"level0": accuracy[:, 0], "level1": accuracy[:, 1], "drop": accuracy[:, 0] - accuracy[:, 1]}

    result = cluster_bootstrap(statistic, clusters, correct, cells=level, n_resamples=50, seed=0)
    assert seen["shape"] == (50, 2, 2)
    # level 0: 2/2 = 1; level 1: 1/2 = 0.5; drop 0.5
    assert result["level0"].estimate == 1.0
    assert result["level1"].estimate == 0.5
    assert result["drop"].estimate == 0.5
    assert result["drop"].n_units == 2


# --- bootstrap versus closed forms -----------------------------------------------------------------------


def test_bootstrap_stderr_of_a_mean_matches_the_analytic_one() -> None:
    # 600 ones, 400 zeros: p = 0.6; s^2 = n/(n-1) p(1-p) = 1000/999 * 0.24, SE = sqrt(0.24 / 999) = 0.0154997
    values = (np.arange(1000) < 600).astype(float)
    analytic = mean_uncertainty(values)
    assert analytic.stderr == pytest.approx(math.sqrt(0.24 / 999), rel=1e-12)
    assert (analytic.low, analytic.high) == pytest.approx(
        (0.6 - Z95 * analytic.stderr, 0.6 + Z95 * analytic.stderr)
    )
    boot = bootstrap_mean(values, n_resamples=2000, seed=0)
    # Tolerance 5%: the bootstrap SE targets sqrt((n-1)/n) * SE (0.05% smaller) and, with R = 2000 resamples
    # of a nearly normal mean, has relative sampling error about 1 / sqrt(2 (R - 1)) = 1.6%; 5% is 3 of those.
    assert boot.stderr == pytest.approx(analytic.stderr, rel=0.05)
    assert boot.estimate == 0.6
    # the percentile interval is close to the normal one (same tolerance argument, on the width)
    assert boot.high - boot.low == pytest.approx(2 * Z95 * analytic.stderr, rel=0.08)


def test_cluster_robust_stderr_by_hand_and_independent_case() -> None:
    # 3 clusters: (y, m) = (2, 2), (0, 1), (1, 3); r = 3/6 = 0.5; residuals y - r m = 1, -0.5, -0.5
    # sum of squares 1.5; SE = sqrt(3/2 * 1.5) / 6 = 1.5 / 6 = 0.25
    values = [1, 1, 0, 1, 0, 0]
    clusters = ["a", "a", "b", "c", "c", "c"]
    result = ratio_uncertainty(values, [1] * 6, clusters, unit="image")
    assert result.estimate == 0.5 and result.stderr == pytest.approx(0.25)
    assert result.method == "analytic" and result.unit == "image" and result.n_units == 3
    # one item per cluster: exactly s / sqrt(n)
    values = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    assert mean_uncertainty(values, clusters=np.arange(5)).stderr == pytest.approx(
        values.std(ddof=1) / math.sqrt(5), rel=1e-12
    )


def test_clustered_unit_gives_a_wider_interval_than_the_naive_one() -> None:
    # 100 clusters of 10 identical items: 50 clusters all right, 50 all wrong; p = 0.5.
    # naive SE = sqrt(0.25 / 999) = 0.015819; clustered: residuals +-5, sum 100 * 25 = 2500,
    # SE = sqrt(100/99 * 2500) / 1000 = 0.050252 (sqrt(10) times wider: the design effect of 10 copies)
    clusters = np.repeat(np.arange(100), 10)
    values = (clusters % 2 == 0).astype(float)
    naive = mean_uncertainty(values)
    clustered = mean_uncertainty(values, clusters, unit="group")
    assert naive.stderr == pytest.approx(math.sqrt(0.25 / 999))
    assert clustered.stderr == pytest.approx(math.sqrt(100 / 99 * 2500) / 1000)
    naive_boot = bootstrap_mean(values, n_resamples=1000, seed=1)
    clustered_boot = bootstrap_mean(values, clusters, n_resamples=1000, seed=1, unit="group")
    width_naive = naive_boot.high - naive_boot.low
    width_clustered = clustered_boot.high - clustered_boot.low
    assert width_clustered > 2.5 * width_naive  # sqrt(10) = 3.16 expected
    assert clustered_boot.stderr == pytest.approx(clustered.stderr, rel=0.1)  # R = 1000: 2.2% sampling error
    assert clustered_boot.unit == "group" and clustered_boot.n_units == 100


def test_wilson_interval_by_hand() -> None:
    # 8 of 10: z^2 = 3.841459; centre = (0.8 + 0.1920729) / 1.3841459 = 0.716744;
    # half = z / 1.3841459 * sqrt(0.016 + 0.0096036) = 1.415999 * 0.160011 = 0.226575
    result = wilson_interval(8, 10)
    z2 = Z95**2
    centre = (0.8 + z2 / 20) / (1 + z2 / 10)
    half = Z95 / (1 + z2 / 10) * math.sqrt(0.8 * 0.2 / 10 + z2 / 400)
    assert result.low == pytest.approx(centre - half) and result.high == pytest.approx(centre + half)
    assert (result.low, result.high) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert result.stderr == pytest.approx(math.sqrt(0.016)) and result.method == "wilson"
    assert wilson_interval(0, 5).low == 0.0 and wilson_interval(5, 5).high == 1.0


def test_normal_interval_and_z() -> None:
    assert z_value(0.95) == pytest.approx(Z95)
    assert z_value(0.90) == pytest.approx(1.6448536, abs=1e-6)
    assert normal_interval(0.5, 0.1) == pytest.approx((0.5 - 0.1 * Z95, 0.5 + 0.1 * Z95))
    assert normal_interval(float("nan"), 0.1) == (None, None)
    with pytest.raises(ValueError):
        z_value(1.0)


# --- McNemar -----------------------------------------------------------------------------------------------


def test_mcnemar_reproduces_the_papers_p_values() -> None:
    # Revisiting MLLM Evaluation, TDIUC: LLaVA-1.5-13B vs LLaVA-NeXT b01/b10 = 2013/2059:
    # z = 46 / sqrt(4072) = 0.72086, one-sided p = 0.5 erfc(0.72086 / sqrt 2) = 0.2355
    first = mcnemar(2013, 2059, variant="paper")
    assert round(first.p_value, 4) == 0.2355
    assert first.statistic == pytest.approx(46**2 / 4072) and first.better == "a"
    # GPT-4o vs LLaVA-1.5-13B 3152/2938: z = 214 / sqrt(6090) = 2.7422, p = 0.0031
    second = mcnemar(3152, 2938, variant="paper")
    assert round(second.p_value, 4) == 0.0031 and second.better == "b"
    # the two-sided corrected test on the same counts: 0.4807 and 0.0063 (spec)
    assert round(mcnemar(2013, 2059, variant="corrected").p_value, 4) == 0.4807
    assert round(mcnemar(3152, 2938, variant="corrected").p_value, 4) == 0.0063
    # paper = half of the uncorrected two-sided p-value
    assert first.p_value == pytest.approx(mcnemar(2013, 2059, variant="uncorrected").p_value / 2)


def test_mcnemar_variants_by_hand() -> None:
    # corrected, b01 = 30, b10 = 10: (20 - 1)^2 / 40 = 9.025, p = erfc(sqrt(4.5125)) = 0.0026631
    corrected = mcnemar(30, 10, variant="corrected")
    assert corrected.statistic == pytest.approx(9.025)
    assert corrected.p_value == pytest.approx(math.erfc(math.sqrt(4.5125)))
    assert corrected.p_value == pytest.approx(0.0026631, abs=1e-7)
    # exact, 2 vs 8: P(X <= 2) = (1 + 10 + 45) / 1024, p = 112 / 1024 = 0.109375
    exact = mcnemar(2, 8, variant="exact")
    assert exact.statistic == 2.0 and exact.p_value == 112 / 1024
    # auto: exact below 25 discordant pairs, corrected from 25 on
    assert mcnemar(2, 8).variant == "exact" and mcnemar(15, 10).variant == "corrected"
    # a tie in the paper variant: z = 0, p = 0.5; no discordant pair: p = 1 everywhere
    assert mcnemar(7, 7, variant="paper").p_value == 0.5
    for variant in ("auto", "corrected", "exact", "uncorrected", "paper"):
        assert mcnemar(0, 0, variant=variant).p_value == 1.0
    with pytest.raises(ValueError):
        mcnemar(1, 2, variant="one-sided")


def test_mcnemar_keeps_compare_py_numbers() -> None:
    from lmms_eval_tasks.framework.comparison import mcnemar as compare_mcnemar

    for b01, b10 in ((0, 0), (2, 8), (12, 12), (30, 10), (2013, 2059), (3152, 2938), (1, 40)):
        for exact, variant in ((None, "auto"), (False, "corrected"), (True, "exact")):
            old = compare_mcnemar(b01, b10, exact=exact)
            new = mcnemar(b01, b10, variant=variant)
            assert (new.statistic, new.p_value, new.method) == (old.statistic, old.p_value, old.method)


def test_exact_tail_for_large_counts_uses_the_binomial_cdf() -> None:
    # 20,001 vs 20,100 discordant: beyond the integer sums; cross-check with the normal approximation
    exact = mcnemar(20_001, 20_100, variant="exact")
    corrected = mcnemar(20_001, 20_100, variant="corrected")
    assert exact.p_value == pytest.approx(corrected.p_value, rel=0.01)


# --- paired comparisons -----------------------------------------------------------------------------------


def _paired_runs():
    # 200 questions: 120 both right, 40 both wrong, b01 = 30 (A wrong, B right), b10 = 10.
    a = np.array([1] * 120 + [0] * 40 + [0] * 30 + [1] * 10, dtype=float)
    b = np.array([1] * 120 + [0] * 40 + [1] * 30 + [0] * 10, dtype=float)
    return a, b


def _accuracy(totals):
    return totals[:, 0] / totals[:, 1]


def test_mcnemar_and_paired_bootstrap_agree_in_direction() -> None:
    a, b = _paired_runs()
    assert discordant_counts(a.astype(bool), b.astype(bool)) == (30, 10)
    ids = np.arange(200)
    # run B listed in another order: pairing is by unit label, not position
    order = np.random.Generator(np.random.PCG64(0)).permutation(200)
    rows_a = np.column_stack([a, np.ones(200)])
    rows_b = np.column_stack([b, np.ones(200)])[order]
    diff = paired_bootstrap(_accuracy, ids, ids[order], rows_a, rows_b, seed=0, unit="question")
    assert isinstance(diff, Difference)
    # accuracies: A = 130 / 200 = 0.65, B = 150 / 200 = 0.75, B - A = 0.10
    assert diff.estimate_a == 0.65 and diff.estimate_b == 0.75 and diff.estimate == pytest.approx(0.10)
    test = mcnemar(30, 10)
    assert test.better == "b" and diff.estimate > 0 and diff.low > 0
    assert test.p_value < 0.05 and diff.p_value < 0.05
    # paired SE by hand: per-question differences d in {+1 x 30, -1 x 10, 0 x 160}, mean 0.1,
    # var = (40/200 - 0.01) * 200/199 = 0.19095, SE = sqrt(0.19095 / 200) = 0.030899; bootstrap within 10%
    assert diff.stderr == pytest.approx(math.sqrt((0.2 - 0.01) * 200 / 199 / 200), rel=0.1)
    # swapping the runs flips the sign and keeps the p-value
    swapped = paired_bootstrap(_accuracy, ids, ids, rows_b[np.argsort(order)], rows_a, seed=0)
    assert swapped.estimate == pytest.approx(-0.10) and swapped.p_value == pytest.approx(diff.p_value)


def test_a_run_compared_with_itself_gives_zero_and_p_one() -> None:
    a, _ = _paired_runs()
    rows = np.column_stack([a, np.ones(200)])
    clusters = np.repeat(np.arange(50), 4)
    diff = paired_bootstrap(_accuracy, clusters, clusters, rows, rows, seed=3)
    assert (diff.estimate, diff.stderr, diff.low, diff.high, diff.p_value) == (0.0, 0.0, 0.0, 0.0, 1.0)
    assert mcnemar(*discordant_counts(a, a)).p_value == 1.0


def test_paired_bootstrap_with_different_units_gives_none_and_a_reason() -> None:
    rows = np.column_stack([np.ones(3), np.ones(3)])
    diff = paired_bootstrap(_accuracy, ["q1", "q2", "q3"], ["q1", "q2", "q4"], rows, rows, unit="question")
    assert diff.estimate is None and diff.p_value is None
    assert "1 only in run A, 1 only in run B" in diff.reason


def test_paired_bootstrap_dict_statistic_and_json() -> None:
    a, b = _paired_runs()
    ids = np.arange(200)
    rows_a, rows_b = np.column_stack([a, np.ones(200)]), np.column_stack([b, np.ones(200)])
    result = paired_bootstrap(
        lambda t: {"accuracy": _accuracy(t), "error": 1 - _accuracy(t)}, ids, ids, rows_a, rows_b
    )
    assert result["accuracy"].estimate == pytest.approx(0.1)
    assert result["error"].estimate == pytest.approx(-0.1)
    json.dumps({name: value.as_dict() for name, value in result.items()}, allow_nan=False)


# --- undefined inputs: None with a reason, never an exception or NaN ------------------------------------


def _json_ok(result: Uncertainty) -> dict:
    payload = result.as_dict()
    json.dumps(payload, allow_nan=False)
    return payload


def test_empty_inputs_give_none_with_a_reason() -> None:
    for result in (
        bootstrap_mean([]),
        mean_uncertainty([]),
        mean_uncertainty([], clusters=[]),
        wilson_interval(0, 0),
        cluster_bootstrap(_accuracy, [], np.zeros((0, 2))),
        loop_bootstrap(lambda rows: float(np.mean(rows)), []),
    ):
        payload = _json_ok(result)
        assert payload["estimate"] is None and payload["stderr"] is None and payload["low"] is None
        assert payload["reason"] and "no" in payload["reason"]
        assert payload["n_units"] == 0


def test_nan_inputs_give_none_with_a_reason() -> None:
    values = [1.0, float("nan"), 0.0, 1.0]
    for result in (bootstrap_mean(values), mean_uncertainty(values), mean_uncertainty(values, [0, 0, 1, 1])):
        payload = _json_ok(result)
        assert payload["estimate"] is None and payload["stderr"] is None
        assert "NaN" in payload["reason"]


def test_undefined_statistic_and_undefined_resamples() -> None:
    # the statistic is 0/0 on the data: None with a reason
    zeros = np.zeros((4, 2))
    payload = _json_ok(cluster_bootstrap(_accuracy, [0, 1, 2, 3], zeros))
    assert payload["estimate"] is None and "undefined" in payload["reason"]
    # level 1 exists only in cluster 0: resamples without cluster 0 leave it undefined -> left out, counted
    rows = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0]])
    result = cluster_bootstrap(
        lambda t: t[:, 1, 0] / t[:, 1, 1], [0, 0, 1, 2], rows, cells=[0, 1, 0, 0], n_resamples=200, seed=0
    )
    # P(cluster 0 never drawn in 3 draws) = (2/3)^3 = 0.296: about 59 of 200
    assert 30 < result.undefined_resamples < 90
    assert result.estimate == 1.0 and result.stderr == 0.0 and "left out" in result.reason
    # a single unit: the estimate, no spread
    single = bootstrap_mean([1.0, 0.0], clusters=["x", "x"])
    assert single.estimate == 0.5 and single.stderr is None and "single" in single.reason


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError):
        bootstrap_mean([1.0, 0.0], n_resamples=1)
    with pytest.raises(ValueError):
        bootstrap_mean([1.0, 0.0], seed=-1)
    with pytest.raises(ValueError):
        cluster_bootstrap(_accuracy, [0, 1], np.ones((3, 2)))
