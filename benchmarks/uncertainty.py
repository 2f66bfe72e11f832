"""Time the cluster bootstrap (1,000 resamples) of every headline metric of a full-size VRB run and of
HallusionBench, on one core.

VRB: one model's synthetic run, ~3,000 images x ~5.3 questions x 71 levels (clean + 14 corruptions x 5
severities) = ~1.1 million per-record VQA accuracies, resampled by image (an image's questions at all 71
levels move together). Metrics from each resample's totals: overall accuracy, the 71 per-level accuracies,
per corruption the accuracy curve over levels 0..5 and from it First-Drop, Range of Error, Error Rate,
Average Error, Average Difference, mean accuracy and relative drop (``scoring.vrb.sub_metrics``, the
scorer's own vectorised definitions), and the model-level means and single-model VRE (equal weights,
min-max scaled over the model's corruptions). The point estimates are checked against the scorer's
``robustness()``.

HallusionBench: 1,129 questions x 3 judge repeats (the synthetic records of benchmarks/
hallusionbench_scoring.py), resampled by figure group (category, subcategory, set_id); aAcc, fAcc, qAcc
(mean over repeats) and their mean; checked against the scorer's ``repeat_metrics``.

Reference in the same run: the Python-loop bootstrap (``loop_bootstrap``, one call per resample, same
draws) on a slice, which must give the same numbers as the vectorised engine on that slice; its time is
extrapolated to the full size. Budgets (full mode; exit 1 if missed): VRB 10 s, HallusionBench 1 s.
``--quick`` runs a reduced size (no budget). Last line: RESULT seconds=<vrb> hallusionbench_seconds=<s> ...
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # one core: before numpy is imported

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from lmms_eval_tasks.corruptions import VRB_PAPER_CORRUPTIONS  # noqa: E402
from lmms_eval_tasks.tasks.hallusionbench import scoring as hb  # noqa: E402
from lmms_eval_tasks.tasks.vrb.scoring import SUB_METRICS, robustness, sub_metrics  # noqa: E402
from lmms_eval_tasks.uncertainty import cluster_bootstrap, loop_bootstrap  # noqa: E402

RESAMPLES = 1000
SEED = 0
VRB_BUDGET = 10.0
HALLUSIONBENCH_BUDGET = 1.0
CORRUPTIONS = list(VRB_PAPER_CORRUPTIONS)
LEVELS = 1 + 5 * len(CORRUPTIONS)  # 71
LEVEL_NAMES = ["clean"] + [f"{name}_s{s}" for name in CORRUPTIONS for s in range(1, 6)]


# --- VRB ---------------------------------------------------------------------------------------------------


def vrb_run(images: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per record: image id, level code (0 clean, 1 + 5 c + s - 1) and VQA accuracy in {0, .3, .6, .9, 1}."""
    rng = np.random.Generator(np.random.PCG64(seed))
    per_image = 1 + rng.poisson(4.3, size=images)  # ~5.3 questions per image
    question_image = np.repeat(rng.choice(10 * images, size=images, replace=False), per_image)
    ability = rng.normal(0.8, 0.6, size=images).repeat(per_image) + rng.normal(0, 1.0, question_image.size)
    strength = rng.uniform(0.05, 0.35, size=len(CORRUPTIONS))
    severity = np.concatenate([[0.0], np.tile(np.arange(1, 6, dtype=float), len(CORRUPTIONS))])
    drop = np.concatenate([[0.0], np.repeat(strength, 5)]) * severity  # [71]
    logit = ability[:, None] - drop[None, :]  # [questions, 71]
    right = rng.random(logit.shape) < 1 / (1 + np.exp(-logit))
    partial = rng.choice([1.0, 0.9, 0.6, 0.3], p=[0.85, 0.05, 0.05, 0.05], size=logit.shape)
    accuracy = np.where(right, partial, 0.0)
    levels = np.broadcast_to(np.arange(LEVELS), logit.shape)
    image = np.broadcast_to(question_image[:, None], logit.shape)
    return image.reshape(-1).copy(), levels.reshape(-1).copy(), accuracy.reshape(-1)


def _curves(level_accuracy: np.ndarray) -> np.ndarray:
    """[R, 71] per-level accuracies -> [R, 14, 6] accuracy curves (clean shared by every corruption)."""
    rows = level_accuracy.shape[0]
    clean = np.repeat(level_accuracy[:, None, :1], len(CORRUPTIONS), axis=1)
    return np.concatenate([clean, level_accuracy[:, 1:].reshape(rows, len(CORRUPTIONS), 5)], axis=2)


def vrb_metrics(level_sums: np.ndarray, level_counts: np.ndarray) -> dict[str, np.ndarray]:
    """Every headline VRB metric of a model, one value per row, from per-level sums and counts [R, 71]."""
    level_accuracy = level_sums / level_counts
    raw = sub_metrics(_curves(level_accuracy))  # each [R, 14]
    out: dict[str, np.ndarray] = {"accuracy": level_sums.sum(axis=1) / level_counts.sum(axis=1)}
    for j, name in enumerate(LEVEL_NAMES):
        out[f"accuracy/{name}"] = level_accuracy[:, j]
    for c, name in enumerate(CORRUPTIONS):
        for key, values in raw.items():
            if key != "accuracy_clean":
                out[f"{name}/{key}"] = values[:, c]
    for key in SUB_METRICS:
        out[key] = raw[key].mean(axis=1)
    clean, mean = level_accuracy[:, 0], raw["accuracy_average"].mean(axis=1)
    out.update(accuracy_clean=clean, accuracy_average=mean, relative_accuracy_drop=(clean - mean) / clean)
    stacked = np.stack([raw[key] for key in SUB_METRICS], axis=-1)  # [R, 14, 5]
    low, high = stacked.min(axis=1, keepdims=True), stacked.max(axis=1, keepdims=True)
    spread = high - low
    scaled = np.where(spread > 0, (stacked - low) / np.where(spread > 0, spread, 1.0), 0.0)
    out["vre"] = scaled.mean(axis=1) @ np.full(len(SUB_METRICS), 1.0 / len(SUB_METRICS))
    return out


def vrb_statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
    """Sums-path statistic: totals [R, 71, 2] (accuracy sum, record count per level) -> metrics."""
    return vrb_metrics(totals[..., 0], totals[..., 1])


def vrb_bootstrap(image: np.ndarray, level: np.ndarray, accuracy: np.ndarray, resamples: int) -> dict:
    """The engine call a VRB scorer makes: rows (accuracy, 1) by level, resampled by image."""
    rows = np.column_stack([accuracy, np.ones_like(accuracy)])
    return cluster_bootstrap(
        vrb_statistic,
        image,
        rows,
        cells=level,
        n_cells=LEVELS,
        n_resamples=resamples,
        seed=SEED,
        unit="image",
    )


def vrb_loop(image: np.ndarray, level: np.ndarray, accuracy: np.ndarray, resamples: int) -> dict:
    """The reference: the same metrics from the resampled records, one Python call per resample."""

    def statistic(rows: np.ndarray) -> dict[str, float]:
        sums = np.bincount(level[rows], weights=accuracy[rows], minlength=LEVELS)[None]
        counts = np.bincount(level[rows], minlength=LEVELS)[None].astype(float)
        return {key: float(value[0]) for key, value in vrb_metrics(sums, counts).items()}

    return loop_bootstrap(statistic, image, n_resamples=resamples, seed=SEED, unit="image")


def check_vrb_estimates(result: dict, level: np.ndarray, accuracy: np.ndarray) -> None:
    """The point estimates equal the scorer's robustness() on the run's per-level accuracies."""
    level_accuracy = np.bincount(level, weights=accuracy, minlength=LEVELS) / np.bincount(
        level, minlength=LEVELS
    )
    curves = _curves(level_accuracy[None])[0]
    scorer = robustness({"model": {name: list(curves[c]) for c, name in enumerate(CORRUPTIONS)}})
    model = scorer["models"]["model"]
    for key in (*SUB_METRICS, "accuracy_clean", "accuracy_average", "relative_accuracy_drop", "vre"):
        assert abs(result[key].estimate - model[key]) < 1e-12, (key, result[key].estimate, model[key])
    for name, cell in scorer["cells"]["model"].items():
        for key in (*SUB_METRICS, "accuracy_average", "relative_accuracy_drop"):
            assert abs(result[f"{name}/{key}"].estimate - cell[key]) < 1e-12, (name, key)


def same_numbers(vectorised: dict, looped: dict) -> None:
    """Every estimate, standard error and interval bound agrees to 1e-9 (relative)."""
    assert vectorised.keys() == looped.keys()
    for name in vectorised:
        a, b = vectorised[name].as_dict(), looped[name].as_dict()
        for key in ("estimate", "stderr", "low", "high"):
            assert (a[key] is None) == (b[key] is None), (name, key)
            if a[key] is not None:
                assert abs(a[key] - b[key]) <= 1e-9 * max(1.0, abs(b[key])), (name, key, a[key], b[key])


# --- HallusionBench -----------------------------------------------------------------------------------------


def hallusionbench_run(repeats: int = 3) -> tuple[hb._Structure, list[list[int]], list[tuple[str, str, str]]]:
    """The 1,129 synthetic records' structure, per-repeat correctness and each question's figure group."""
    path = Path(__file__).resolve().parent / "hallusionbench_scoring.py"
    spec = importlib.util.spec_from_file_location("hallusionbench_scoring_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    records = module.synthetic_records(random.Random(7), repeats=repeats)
    structure = hb.build_structure(hb.parse_questions(records))
    correct = [
        [
            hb.question_correct(q, str(record["judge_verdict"][r]))
            for q, record in zip(structure.questions, records, strict=True)
        ]
        for r in range(repeats)
    ]
    groups = [(q.category, q.subcategory, q.set_id) for q in structure.questions]
    return structure, correct, groups


HB_METRICS = ("aAcc", "fAcc", "qAcc")


def hallusionbench_rows(structure, correct, groups) -> tuple[list, np.ndarray]:
    """Rows (questions, figures, pairs) with their figure group and values [rows, repeat, metric, 2]."""
    repeats = len(correct)
    units = [[i] for i in range(len(structure.questions))], structure.figures[""], structure.pairs[""]
    labels, values = [], []
    for m, members_list in enumerate(units):
        for members in members_list:
            row = np.zeros((repeats, len(HB_METRICS), 2))
            for r in range(repeats):
                row[r, m] = (float(all(correct[r][i] for i in members)), 1.0)
            labels.append(groups[members[0]])
            values.append(row)
    return labels, np.asarray(values)


def hallusionbench_statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
    """totals [R, repeat, metric, 2] -> percent per metric, averaged over repeats, and their mean."""
    shares = 100.0 * totals[..., 0] / totals[..., 1]  # [R, repeat, metric]
    means = shares.mean(axis=1)
    out = {name: means[:, m] for m, name in enumerate(HB_METRICS)}
    out["overall"] = means.mean(axis=1)
    return out


def hallusionbench_bootstrap(structure, correct, groups, resamples: int) -> dict:
    """The engine call a HallusionBench scorer makes, from its structure and per-repeat correctness."""
    labels, values = hallusionbench_rows(structure, correct, groups)
    return cluster_bootstrap(
        hallusionbench_statistic, labels, values, n_resamples=resamples, seed=SEED, unit="figure group"
    )


def hallusionbench_loop(structure, correct, groups, resamples: int) -> dict:
    """The reference: the same metrics from each resample's rows, one Python call per resample."""
    labels, values = hallusionbench_rows(structure, correct, groups)

    def statistic(rows: np.ndarray) -> dict[str, float]:
        totals = values[rows].sum(axis=0)[None]
        return {key: float(value[0]) for key, value in hallusionbench_statistic(totals).items()}

    return loop_bootstrap(statistic, labels, n_resamples=resamples, seed=SEED, unit="figure group")


def check_hallusionbench_estimates(result: dict, structure, correct) -> None:
    """The point estimates equal the scorer's repeat_metrics averaged over the repeats."""
    per_repeat = []
    for repeat in correct:
        verdicts = [hb.CORRECT if c else hb.INCORRECT for c in repeat]  # question_correct gives c back
        metrics, _ = hb.repeat_metrics(structure, verdicts, [None] * len(verdicts), diagnosis=False)
        per_repeat.append(metrics)
    for name in HB_METRICS:
        expected = sum(m[hb.metric_key("", name)] for m in per_repeat) / len(per_repeat)
        assert abs(result[name].estimate - expected) < 1e-9, (name, result[name].estimate, expected)


# --- main ---------------------------------------------------------------------------------------------------


def _timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - start


def main() -> int:
    """Run the benchmark; 1 when a full-mode budget is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="reduced size, no budget (the test suite's mode)"
    )
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    images = 300 if args.quick else 3000
    slice_images, loop_resamples = (30, 10) if args.quick else (150, 20)

    image, level, accuracy = vrb_run(images)
    records = image.size
    result, vrb_seconds = _timed(vrb_bootstrap, image, level, accuracy, RESAMPLES)
    check_vrb_estimates(result, level, accuracy)
    # reference on a slice: the first slice_images images, all their records
    keep = np.isin(image, np.unique(image)[:slice_images])
    part = image[keep], level[keep], accuracy[keep]
    looped, loop_seconds = _timed(vrb_loop, *part, loop_resamples)
    same_numbers(vrb_bootstrap(*part, loop_resamples), looped)
    loop_estimate = loop_seconds / loop_resamples * RESAMPLES * records / part[0].size
    print(
        f"VRB: {records:,} records, {len(np.unique(image)):,} images, {len(result)} metrics, "
        f"{RESAMPLES} resamples: {vrb_seconds:.2f} s; Python-loop reference (same numbers on "
        f"{part[0].size:,} records x {loop_resamples} resamples) extrapolates to {loop_estimate:.0f} s"
    )
    for key in ("accuracy", "accuracy/clean", "first_drop", "error_rate", "average_error", "vre"):
        entry = result[key]
        print(f"  {key}: {entry.estimate:.4f} +- {entry.stderr:.4f} [{entry.low:.4f}, {entry.high:.4f}]")

    structure, correct, groups = hallusionbench_run()
    hb_result, hb_seconds = _timed(hallusionbench_bootstrap, structure, correct, groups, RESAMPLES)
    check_hallusionbench_estimates(hb_result, structure, correct)
    hb_looped, hb_loop_seconds = _timed(hallusionbench_loop, structure, correct, groups, 50)
    same_numbers(hallusionbench_bootstrap(structure, correct, groups, 50), hb_looped)
    hb_loop_estimate = hb_loop_seconds / 50 * RESAMPLES
    print(
        f"HallusionBench: {len(structure.questions)} questions x {len(correct)} repeats, "
        f"{hb_result['aAcc'].n_units} figure groups, {RESAMPLES} resamples: {hb_seconds:.3f} s; "
        f"Python loop (same numbers on 50 resamples) extrapolates to {hb_loop_estimate:.1f} s"
    )
    for key in (*HB_METRICS, "overall"):
        entry = hb_result[key]
        print(f"  {key}: {entry.estimate:.2f} +- {entry.stderr:.2f} [{entry.low:.2f}, {entry.high:.2f}]")

    missed = not args.quick and (vrb_seconds > VRB_BUDGET or hb_seconds > HALLUSIONBENCH_BUDGET)
    if missed:
        print(
            f"budget missed: VRB {vrb_seconds:.2f} s (<= {VRB_BUDGET}), HallusionBench {hb_seconds:.3f} s "
            f"(<= {HALLUSIONBENCH_BUDGET})",
            file=sys.stderr,
        )
    print(
        f"RESULT seconds={vrb_seconds:.3f} hallusionbench_seconds={hb_seconds:.4f} records={records} "
        f"resamples={RESAMPLES} loop_reference_seconds={loop_estimate:.1f} "
        f"hallusionbench_loop_reference_seconds={hb_loop_estimate:.2f} quick={int(args.quick)}"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
