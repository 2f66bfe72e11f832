"""DARE end to end: the launcher runs the sample grid with the random baseline and the tiny llava_hf."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from lmms_eval_tasks.reporting.schema import read_report
from lmms_eval_tasks.tasks.dare import BENCHMARK, grid
from lmms_eval_tasks.tasks.dare.scoring import GOLD_COUNTS, score
from tests.helpers import results_json, run_launcher, samples_jsonl

pytestmark = pytest.mark.slow

SUMMARY_KEYS = [
    "single_accuracy",
    "single_accuracy_std_over_prompts",
    "single_format_range",
    "single_var_accuracy",
    "single_var_drop",
    *(f"multi_exact_k{count}" for count in GOLD_COUNTS),
    "multi_f1",
    "unparsed",
]
TABLE_KEYS = [
    f"{key}__{category}"
    for key in ("single_accuracy", "single_var_accuracy", "multi_f1")
    for category in ("count", "order")
]


def _pack_records(output: Path, tasks: list[str]) -> list[dict]:
    """The records the pack's own per-task sample files hold (written by the DARE aggregation)."""
    records = []
    for task in tasks:
        path = next(output.rglob(f"lmms_eval_tasks/*/{task}_samples.jsonl"))
        records += [
            json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    return records


def _check_group(output: Path, group: str) -> dict:
    """The group's numbers: headline keys from the host's results (checked against the pack report),
    every other key from the group's pack report (null there when undefined: NaN here)."""
    results = results_json(output)
    host_numbers = results["results"][group]
    report = read_report(next(output.rglob(f"lmms_eval_tasks/*/{group}_report.json")))
    group_results = {
        f"{key},none": math.nan if value is None else value for key, value in report["metrics"].items()
    }
    for key in BENCHMARK.headline_metrics:
        assert f"{key},none" in host_numbers, f"{group} lacks {key} in the results"
        assert _same(host_numbers[f"{key},none"], group_results[f"{key},none"]), key
    for key in SUMMARY_KEYS + TABLE_KEYS:  # a number, or undefined (NaN) on a --limit run
        group_results.setdefault(f"{key},none", math.nan)
        assert isinstance(group_results[f"{key},none"], int | float), key
    table = report["details"]["summary_table"]
    assert set(table) == {"count", "order", "all"}
    assert {"single_acc", "prompt_std", "var_worst", "var_drop", "multi_k0", "multi_f1"} <= set(table["all"])
    assert report["details"]["summary_table_markdown"].startswith("| category | single_acc |")
    return group_results


def _same(left: float, right: float) -> bool:
    return (math.isnan(left) and math.isnan(right)) or left == pytest.approx(right)


def test_random_baseline_runs_the_full_sample_grid(tmp_path: Path) -> None:
    output = tmp_path / "random"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--model_args",
        "seed=3",
        "--tasks",
        "dare_sample_full",
        "--output_path",
        str(output),
        "--log_samples",
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    group = _check_group(output, "dare_sample_full")
    members = grid.groups()["dare_sample_full"]
    records = _pack_records(output, members)
    assert len(records) == sum(len(samples_jsonl(output, task)) for task in members)
    # The group's numbers are exactly DARE scoring over the union of its members' records.
    rescored = score(records)[0]
    for key in SUMMARY_KEYS + TABLE_KEYS:
        assert _same(group[f"{key},none"], rescored[key]), key
    assert group["unparsed,none"] == 0  # the baseline always answers in the task's format
    # The host's samples files show each record, with its parse diagnostics, once: under the task's
    # first metric key (the other keys hold a short pointer to it).
    primary, *others = grid.TASKS_BY_NAME["dare_sample_multi_log_p2"].result_keys()
    sample = samples_jsonl(output, "dare_sample_multi_log_p2")[0]
    assert all(sample[key] == f"see {primary!r}" for key in others)
    logged = sample[primary]
    assert {"prediction", "losses", "parsed", "parse_status", "correct", "answer", "category"} <= set(logged)
    assert len(logged["losses"]) == 16


def test_tiny_llava_generation_path(tmp_path: Path, tiny_llava_dir: Path) -> None:
    output = tmp_path / "llava"
    completed = run_launcher(
        "--model",
        "llava_hf",
        "--model_args",
        f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
        "--tasks",
        "dare_sample",
        "--limit",
        "4",  # a binary task's first question is four documents (one per option): a smaller limit is refused
        "--gen_kwargs",
        "max_new_tokens=8",  # a random model: keep it short
        "--output_path",
        str(output),
        "--log_samples",
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    group = _check_group(output, "dare_sample")
    sample = samples_jsonl(output, "dare_sample_single_json_p1")[0]["single_accuracy"]
    assert isinstance(sample["prediction"], str) and sample["parse_status"] in ("ok", "none", "unparsed")
    # A random tiny model rarely answers in format: unparsable outputs are counted, not crashes.
    assert group["unparsed,none"] == sum(
        record["parse_status"] == "unparsed" for record in _pack_records(output, grid.groups()["dare_sample"])
    )


def test_tiny_llava_loglikelihood_path(tmp_path: Path, tiny_llava_dir: Path) -> None:
    """Out-Log through the host's chat llava_hf, no --force_simple (the pack's host patches make it work)."""
    output = tmp_path / "llava_log"
    tasks = ["dare_sample_single_log_p1", "dare_sample_multi_log_p2"]
    completed = run_launcher(
        "--model",
        "llava_hf",
        "--model_args",
        f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
        "--tasks",
        ",".join(tasks),
        "--limit",
        "4",  # a binary task's first question is four documents (one per option): a smaller limit is refused
        "--output_path",
        str(output),
        "--log_samples",
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = results_json(output)["results"]
    assert isinstance(results["dare_sample_single_log_p1"]["single_accuracy,none"], float)
    assert isinstance(results["dare_sample_multi_log_p2"]["multi_f1,none"], float)
    for task, choices in zip(tasks, (4, 16), strict=True):
        for record in _pack_records(output, [task]):
            losses = record["losses"]
            assert len(losses) == choices and all(math.isfinite(loss) and loss > 0 for loss in losses)
            # the choice is the candidate with the lowest mean negative log-likelihood
            candidates = ["A", "B", "C", "D"] if choices == 4 else None
            if candidates:
                assert record["prediction"] == candidates[losses.index(min(losses))]
            assert record["parse_status"] in ("ok", "none")
