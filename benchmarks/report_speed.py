"""Report rendering speed: 20 runs of every benchmark, full-size report files, one `report.html`.

The 20 runs' reports are generated synthetically (seeded) in a temporary folder with the shapes the pack's
tasks write: HallusionBench with every category and subcategory, DARE's grid group with its 25 member
reports, VRB's full 14-corruption group with its 71 level reports, ConTextual, TDIUC (12 types), TallyQA
(counts 0..15), DVQA and VQDv1. Timed: `write_report_for_runs` (reading, every section, every plot, HTML
and Markdown). Target: under 10 s. Last line: ``RESULT seconds=... runs=20 reports=... plots=...``.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from argparse import Namespace
from pathlib import Path
from typing import Any

from lmms_eval_tasks.human_report import write_report_for_runs
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.tasks.tdiuc.scoring import QUESTION_TYPES

RUNS = 20
HB_PREFIXES = (
    "",
    "VD_",
    "VS_",
    *(f"VD_{s}_" for s in ("illusion", "math", "ocr", "figure", "video")),
    *(f"VS_{s}_" for s in ("chart", "table", "map", "ocr")),
)
HB_KEYS = (
    "aAcc",
    "qAcc",
    "fAcc",
    "easy_aAcc",
    "hard_aAcc",
    "consistency_correct",
    "consistency_wrong",
    "consistency_inconsistent",
    "overall",
    "LH",
    "VI",
    "Mixed",
)
CORRUPTIONS = (
    "shot_noise",
    "gaussian_noise",
    "impulse_noise",
    "speckle_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "frost",
    "fog",
    "brightness",
    "contrast",
    "pixelate",
)
DARE_CATEGORIES = ("count", "order", "vcr", "trick")
TDIUC_TYPES = QUESTION_TYPES  # the scorer's list, not a copy


def _pct(rng: random.Random) -> float:
    return rng.uniform(0, 100)


def hallusionbench(rng: random.Random) -> list[dict[str, Any]]:
    metrics = {f"{p}{k}": _pct(rng) for p in HB_PREFIXES for k in HB_KEYS}
    metrics.update({f"{p}pct_diff": rng.uniform(-0.5, 0.5) for p in HB_PREFIXES})
    metrics.update({f"{p}fp_ratio": rng.random() for p in HB_PREFIXES})
    metrics["unjudged_verdicts"] = rng.randint(0, 3)
    usage = {
        "calls": 2258,
        "cache_hits": 0,
        "prompt_tokens": 400_000,
        "completion_tokens": 9000,
        "estimated_cost_usd": 4.2,
    }
    details = {"counts": {"questions": 1129, "question_pairs": 346, "figures": 470}, "judge_usage": usage}
    return [
        {
            "benchmark": "hallusionbench",
            "task": "hallusionbench",
            "metrics": metrics,
            "details": details,
            "judge": {"kind": "openai", "model": "gpt-4-0613", "repeats": 1},
        }
    ]


def dare(rng: random.Random) -> list[dict[str, Any]]:
    setups = [f"single_{f}_p{p}" for f in ("gen", "json") for p in (1, 2, 3)]
    setups += ["single_csv_p1", "single_word_p1", "single_inv_p1"]
    setups += [f"single_var_{f}_p{p}" for f in ("gen", "json") for p in (1, 2, 3)]
    setups += [f"multi_{f}_p{p}" for f in ("gen", "json") for p in (1, 2, 3)]
    setups += [
        "multi_binary_p1",
        "multi_plus_all_gen_p1",
        "multi_plus_none_gen_p1",
        "multi_plus_all_none_gen_p1",
    ]
    members = []
    for setup in setups:
        key = (
            "single_var_accuracy"
            if "var" in setup
            else "single_accuracy"
            if setup.startswith("single")
            else "multi_f1"
        )
        metrics = {key: _pct(rng), f"unparsed_{setup}": rng.randint(0, 5)}
        metrics.update({f"{key}__{c}": _pct(rng) for c in DARE_CATEGORIES})
        members.append({"benchmark": "dare", "task": f"dare_{setup}", "metrics": metrics})
    columns = (
        "single_acc",
        "prompt_std",
        "format_range",
        "var_worst",
        "var_drop",
        *(f"multi_k{k}" for k in range(5)),
        "multi_f1",
    )
    summary = {c: {column: _pct(rng) for column in columns} for c in (*DARE_CATEGORIES, "all")}
    metrics = {
        key: _pct(rng)
        for key in (
            "single_accuracy",
            "single_accuracy_std_over_prompts",
            "single_format_range",
            "single_var_accuracy",
            "single_var_drop",
            "multi_f1",
            *(f"multi_exact_k{k}" for k in range(5)),
        )
    }
    metrics.update({f"single_accuracy__{c}": _pct(rng) for c in DARE_CATEGORIES})
    metrics["unparsed"] = rng.randint(0, 50)
    group = {
        "benchmark": "dare",
        "task": "dare",
        "metrics": metrics,
        "details": {"summary_table": summary, "members": [m["task"] for m in members]},
    }
    return [*members, group]


def vrb(rng: random.Random) -> list[dict[str, Any]]:
    clean = rng.uniform(0.6, 0.8)
    by_corruption = {}
    members = [{"benchmark": "vrb", "task": "vrb_clean", "metrics": {"accuracy": clean}}]
    for name in CORRUPTIONS:
        levels = [clean, *sorted((rng.uniform(0.2, clean) for _ in range(5)), reverse=True)]
        by_corruption[name] = {"accuracy_by_level": levels, "accuracy_average": sum(levels) / 6}
        members += [
            {"benchmark": "vrb", "task": f"vrb_{name}_s{k}", "metrics": {"accuracy": levels[k]}}
            for k in range(1, 6)
        ]
    metrics = {
        key: rng.random()
        for key in (
            "accuracy",
            "accuracy_average",
            "relative_accuracy_drop",
            "first_drop",
            "range_of_error",
            "error_rate",
            "average_error",
            "average_difference",
            "vre",
        )
    }
    metrics["accuracy_clean"] = clean
    details = {
        "by_corruption": by_corruption,
        "complete_corruptions": list(CORRUPTIONS),
        "accuracy_by_question_type": {f"type {i}": rng.random() for i in range(65)},
        "members": [m["task"] for m in members],
    }
    group = {
        "benchmark": "vrb",
        "task": "vrb",
        "metrics": metrics,
        "details": details,
        "corruption": {"profile": "vrb", "seed": 0},
    }
    return [*members, group]


def contextual(rng: random.Random) -> list[dict[str, Any]]:
    scenarios = (
        "time",
        "shopping",
        "navigation",
        "abstract",
        "app",
        "web",
        "infographics",
        "misc_natural_scenes",
    )
    per_scenario = {}
    for name in scenarios:
        judged = rng.randint(40, 100)
        per_scenario[name] = {
            "items": judged,
            "judged": judged,
            "accepted": rng.randint(0, judged),
            "unjudged": 0,
        }
    metrics = {f"acceptance_rate_{name}": _pct(rng) for name in scenarios}
    metrics.update(acceptance_rate=_pct(rng), judged=506, unjudged=0, judge_model="gpt-4-0613")
    return [
        {
            "benchmark": "contextual",
            "task": "contextual",
            "metrics": metrics,
            "details": {"per_scenario": per_scenario},
            "judge": {"kind": "openai", "model": "gpt-4-0613"},
        }
    ]


def revisiting(rng: random.Random) -> list[dict[str, Any]]:
    tdiuc = {f"accuracy_{t}": _pct(rng) for t in TDIUC_TYPES}
    tdiuc.update({f"normalized_accuracy_{t}": _pct(rng) for t in TDIUC_TYPES})
    tdiuc.update({f"questions_{t}": rng.randint(50, 500) for t in TDIUC_TYPES})
    tdiuc.update(micro_accuracy=_pct(rng), macro_accuracy=_pct(rng), harmonic_mpt=_pct(rng))
    tally: dict[str, Any] = {}
    for split in ("simple", "complex"):
        tally.update({f"{split}_accuracy_count_{c}": _pct(rng) for c in range(16)})
        tally.update({f"{split}_questions_count_{c}": rng.randint(1, 300) for c in range(16)})
        tally.update({f"{split}_micro_accuracy": _pct(rng), f"{split}_rmse": rng.uniform(0, 3)})
    dvqa = {f"accuracy_{t}": _pct(rng) for t in ("structure", "data", "reasoning")}
    vqd = {"micro_f1": _pct(rng), "macro_f1": _pct(rng), "queries": 3000}
    for bucket in ("0", "1", "2", "3", "4+"):
        vqd.update(
            {f"precision_{bucket}": _pct(rng), f"recall_{bucket}": _pct(rng), f"queries_{bucket}": 600}
        )
    return [
        {"benchmark": "tdiuc", "task": "tdiuc", "metrics": tdiuc},
        {"benchmark": "tallyqa", "task": "tallyqa", "metrics": tally},
        {"benchmark": "dvqa", "task": "dvqa", "metrics": dvqa},
        {"benchmark": "vqdv1", "task": "vqdv1", "metrics": vqd},
    ]


def write_runs(root: Path, runs: int = RUNS, seed: int = 0) -> int:
    """Write ``runs`` model folders of synthetic reports under ``root``; returns how many reports."""
    rng = random.Random(seed)
    written = 0
    for index in range(runs):
        args = Namespace(
            model="llava_hf", model_args=f"pretrained=org/model-{index:02d}", limit=None, seed=None
        )
        folder = root / f"org__model-{index:02d}" / reports.PACK_FOLDER / "20261201_000000"
        for spec in (*hallusionbench(rng), *dare(rng), *vrb(rng), *contextual(rng), *revisiting(rng)):
            report = reports.build_report(
                benchmark=spec["benchmark"],
                task=spec["task"],
                metrics=spec["metrics"],
                details=spec.get("details"),
                args=args,
                judge=spec.get("judge"),
                corruption=spec.get("corruption"),
            )
            report["provenance"]["run_id"] = folder.name
            reports.write_report_files(folder, report)
            written += 1
    return written


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    runs = 2 if parser.parse_args().quick else RUNS
    with tempfile.TemporaryDirectory(prefix="report_speed_") as temporary:
        root = Path(temporary)
        count = write_runs(root / "runs", runs)
        started = time.perf_counter()
        html = write_report_for_runs([root / "runs"], root / "report")
        seconds = time.perf_counter() - started
        plots = len(list((root / "report" / "plots").glob("*.png")))
        failed = html.read_text(encoding="utf-8").count("could not be rendered")
        if failed:
            raise SystemExit(f"{failed} section(s) failed to render; see the log above")
        size = html.stat().st_size
    print(
        f"report for {runs} runs ({count} reports): {seconds:.2f} s, {plots} plots, HTML {size / 1e6:.1f} MB"
    )
    print(f"RESULT seconds={seconds:.3f} runs={runs} reports={count} plots={plots} target_seconds=10")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
