"""Time the REAL per-benchmark standard errors (the benchmark's ``score``, which builds the resampling its
headline numbers come from, timed apart as ``score_seconds``; then ``framework.intervals.headline``: the
cluster bootstrap of that resampling, 1,000 resamples, every headline metric, timed as ``seconds``) on a
full-size VRB run and on HallusionBench, on one core.

VRB: one model's synthetic run, ~3,000 images x ~5.3 questions x 71 levels (clean + 14 corruptions x 5
severities) = ~1.1 million records (dicts, as ``score`` reads them: 10 human answers, a prediction whose
VQA accuracy is 0, .3, .6, .9 or 1), resampled by image (``tasks/vrb/scoring.py``: the records' VQA
accuracies, the level cells, the statistic of every headline metric from each resample's accuracy
curves). Building the records is not timed.

HallusionBench: 1,129 questions x 3 judge repeats (the synthetic records of benchmarks/
hallusionbench_scoring.py), resampled by figure group.

References in the same run: (1) a hand-written vectorised statistic on plain arrays (this file's
``vrb_metrics``, whose point estimates are checked against the scorer's ``robustness()``; HallusionBench's
checked against ``repeat_metrics``) must give the real function's numbers (estimate, stderr, bounds) for
every shared metric, same draws; (2) the Python-loop bootstrap (``loop_bootstrap``, one call per resample)
must give the hand statistic's numbers on a slice; its time is extrapolated to the full size. Budgets
(full mode; exit 1 if missed): VRB 10 s, HallusionBench 1 s. ``--quick`` runs a reduced size (no budget).
Last line: RESULT seconds=<vrb> hallusionbench_seconds=<s> ...
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
from lmms_eval_tasks.uncertainty.bootstrap import cluster_bootstrap, loop_bootstrap  # noqa: E402

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


_ANSWERS = ["a"] * 4 + ["b"] * 3 + ["c"] * 2 + ["d"]  # a prediction matching k of them scores min(1, ~k/3)
_PREDICTION = {1.0: "a", 0.9: "b", 0.6: "c", 0.3: "d", 0.0: "z"}


def vrb_records(image: np.ndarray, level: np.ndarray, accuracy: np.ndarray) -> list[dict]:
    """The run as scorer records: one question per 71 consecutive rows, predictions of the given accuracy."""
    rows = zip(image.tolist(), level.tolist(), accuracy.tolist(), strict=True)
    names = [("clean", 0)] + [(name, s) for name in CORRUPTIONS for s in range(1, 6)]
    return [
        {"question_id": i // LEVELS, "image_id": int(img), "answers": _ANSWERS, "multiple_choice_answer": "a",
         "question_type": "what", "answer_type": "other", "corruption": names[lvl][0],
         "severity": names[lvl][1], "prediction": _PREDICTION[float(acc)]}
        for i, (img, lvl, acc) in enumerate(rows)
    ]  # fmt: skip


def real_score(benchmark: str, records: list[dict]) -> object:
    """The pack's own path, first step: the benchmark's ``score``, which builds the resampling its
    headline numbers come from (timed apart: it is the scoring every run does anyway)."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    return get_benchmark(benchmark).score(records)[1]["resampling"]


def real_bootstrap(benchmark: str, resampling: object) -> dict:
    """The pack's own path, second step: the bootstrap of every headline metric from the scorer's
    resampling (``framework.intervals``), what standard errors add to a run."""
    from lmms_eval_tasks.framework.intervals import headline

    return headline(benchmark, resampling, RESAMPLES, SEED)


def same_shared_numbers(real: dict, reference: dict) -> list[str]:
    """The real function agrees with the reference on every metric both give (1e-9 relative); the names."""
    shared = [name for name in real if name in reference]
    same_numbers({name: real[name] for name in shared}, {name: reference[name] for name in shared})
    return shared


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


def _hallusionbench_module():
    path = Path(__file__).resolve().parent / "hallusionbench_scoring.py"
    spec = importlib.util.spec_from_file_location("hallusionbench_scoring_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hallusionbench_records(repeats: int = 3) -> list[dict]:
    """The 1,129 synthetic records with ``repeats`` judge verdicts each."""
    return _hallusionbench_module().synthetic_records(random.Random(7), repeats=repeats)


def hallusionbench_run(repeats: int = 3) -> tuple[hb._Structure, list[list[int]], list[tuple[str, str, str]]]:
    """The 1,129 synthetic records' structure, per-repeat correctness and each question's figure group."""
    records = hallusionbench_records(repeats)
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
    records = vrb_records(image, level, accuracy)
    resampling, vrb_score_seconds = _timed(real_score, "vrb", records)
    real, vrb_seconds = _timed(real_bootstrap, "vrb", resampling)
    del records, resampling
    reference = vrb_bootstrap(image, level, accuracy, RESAMPLES)
    check_vrb_estimates(reference, level, accuracy)
    shared = same_shared_numbers(real, reference)
    # reference 2 on a slice: the first slice_images images, all their records, by the Python loop
    keep = np.isin(image, np.unique(image)[:slice_images])
    part = image[keep], level[keep], accuracy[keep]
    looped, loop_seconds = _timed(vrb_loop, *part, loop_resamples)
    same_numbers(vrb_bootstrap(*part, loop_resamples), looped)
    loop_estimate = loop_seconds / loop_resamples * RESAMPLES * image.size / part[0].size
    print(
        f"VRB: {image.size:,} records, {len(np.unique(image)):,} images, {len(real)} headline metrics "
        f"(tasks/vrb/scoring.py: score {vrb_score_seconds:.2f} s), {RESAMPLES} resamples: "
        f"{vrb_seconds:.2f} s; "
        "same numbers as the "
        f"hand-written statistic on {len(shared)} metrics; Python-loop reference (same numbers on "
        f"{part[0].size:,} records x {loop_resamples} resamples) extrapolates to {loop_estimate:.0f} s"
    )
    for key, entry in real.items():
        print(f"  {key}: {entry.estimate:.4f} +- {entry.stderr:.4f} [{entry.low:.4f}, {entry.high:.4f}]")

    hb_records = hallusionbench_records()
    hb_resampling, hb_score_seconds = _timed(real_score, "hallusionbench", hb_records)
    hb_real, hb_seconds = _timed(real_bootstrap, "hallusionbench", hb_resampling)
    structure, correct, groups = hallusionbench_run()
    hb_result = hallusionbench_bootstrap(structure, correct, groups, RESAMPLES)
    check_hallusionbench_estimates(hb_result, structure, correct)
    hb_shared = same_shared_numbers(hb_real, hb_result)
    hb_looped, hb_loop_seconds = _timed(hallusionbench_loop, structure, correct, groups, 50)
    same_numbers(hallusionbench_bootstrap(structure, correct, groups, 50), hb_looped)
    hb_loop_estimate = hb_loop_seconds / 50 * RESAMPLES
    print(
        f"HallusionBench: {len(structure.questions)} questions x {len(correct)} repeats, "
        f"{hb_real['aAcc'].n_units} figure groups, {len(hb_real)} headline metrics "
        f"(tasks/hallusionbench/scoring.py: score {hb_score_seconds:.3f} s), {RESAMPLES} resamples: "
        f"{hb_seconds:.3f} s; same numbers "
        f"as the hand-written statistic on {len(hb_shared)} metrics; Python loop (same numbers on 50 "
        f"resamples) extrapolates to {hb_loop_estimate:.1f} s"
    )
    for key, entry in hb_real.items():
        print(f"  {key}: {entry.estimate:.2f} +- {entry.stderr:.2f} [{entry.low:.2f}, {entry.high:.2f}]")

    missed = not args.quick and (vrb_seconds > VRB_BUDGET or hb_seconds > HALLUSIONBENCH_BUDGET)
    if missed:
        print(
            f"budget missed: VRB {vrb_seconds:.2f} s (<= {VRB_BUDGET}), HallusionBench {hb_seconds:.3f} s "
            f"(<= {HALLUSIONBENCH_BUDGET})",
            file=sys.stderr,
        )
    print(
        f"RESULT seconds={vrb_seconds:.3f} hallusionbench_seconds={hb_seconds:.4f} "
        f"score_seconds={vrb_score_seconds:.3f} hallusionbench_score_seconds={hb_score_seconds:.4f} "
        f"records={image.size} "
        f"resamples={RESAMPLES} loop_reference_seconds={loop_estimate:.1f} "
        f"hallusionbench_loop_reference_seconds={hb_loop_estimate:.2f} quick={int(args.quick)}"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
