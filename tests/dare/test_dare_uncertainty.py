"""DARE standard errors by question, checked against resample distributions worked out by hand, and
``compare dare``'s paired bootstrap (the real CLI)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from lmms_eval_tasks.framework.intervals import headline_intervals, paired_difference
from lmms_eval_tasks.tasks.dare.scoring import score
from tests.helpers import REPO_ROOT, offline_environment

_OPTIONS = {"A": "1", "B": "2", "C": "3", "D": "4"}


def _single(question: str, prompt: int, right: bool, setup: str = "single", instance: int = 0) -> dict:
    """A count question whose gold is B; a right record answers B, a wrong one C."""
    return {"id": question, "instance_id": instance, "category": "count", "setup": setup, "answer": ["B"],
            **_OPTIONS, "format": "gen", "prompt": prompt, "prediction": "B" if right else "C"}  # fmt: skip


def _two_questions() -> list[dict]:
    # question a right under all 3 prompts; question b right under prompt 1 only
    return [_single("a", p, True) for p in (1, 2, 3)] + [_single("b", p, p == 1) for p in (1, 2, 3)]


def test_single_accuracy_and_its_std_over_prompts_resample_whole_questions():
    # data: prompt accuracies 100, 50, 50 -> mean 66.667, std (ddof 0) sqrt((33.33^2 + 2 * 16.67^2) / 3)
    # = 23.570. Two questions, so a resample is {a,a} (1/4): 100,100,100 -> mean 100, std 0; {b,b} (1/4):
    # 100,0,0 -> mean 33.333, std 47.140; {a,b} (1/2): the data. The mean's bootstrap sd is
    # sqrt(1/4 * 33.33^2 + 1/4 * 33.33^2) = 23.570 (resampling records instead would fix prompt 1 at 100
    # and give sqrt(2 * 1250) / 3 = 16.667); its interval spans 33.333 .. 100; the std's spans 0 .. 47.140.
    records = _two_questions()
    scored = score(records)[0]
    result = headline_intervals("dare", records, bootstrap_resamples=1000, bootstrap_seed=0)
    mean, std = result["single_accuracy"], result["single_accuracy_std_over_prompts"]
    assert mean.estimate == pytest.approx(scored["single_accuracy"]) == pytest.approx(200 / 3)
    assert std.estimate == pytest.approx(scored["single_accuracy_std_over_prompts"])
    assert std.estimate == pytest.approx(math.sqrt((100 / 3) ** 2 / 3 + 2 * (50 / 3) ** 2 / 3))
    assert mean.unit == "question" and mean.n_units == 2 and mean.seed == 0
    assert mean.stderr == pytest.approx(math.sqrt(0.5) * 100 / 3, rel=0.08)
    assert (mean.low, mean.high) == (pytest.approx(100 / 3), pytest.approx(100.0))
    assert (std.low, std.high) == (pytest.approx(0.0, abs=1e-9), pytest.approx(math.sqrt(2) * 100 / 3))
    # the unparsed count: no record is unparsed, in every resample
    assert result["unparsed"].estimate == 0 and result["unparsed"].stderr == 0


def test_single_var_worst_case_resamples_whole_instances():
    # instance 1: 3 variants all right; instance 2: variant 2 wrong -> worst case 50 (prompt 1 only).
    # Resamples {1,1} 100, {2,2} 0, {1,2} 50: sd sqrt(1/4 * 50^2 * 2) = 35.355, interval 0 .. 100.
    records = [
        _single(f"v{i}-{v}", 1, not (i == 2 and v == 2), "single_var", instance=i)
        for i in (1, 2)
        for v in (1, 2, 3)
    ]
    result = headline_intervals("dare", records, bootstrap_resamples=1000, bootstrap_seed=1)
    worst = result["single_var_accuracy"]
    assert worst.estimate == pytest.approx(score(records)[0]["single_var_accuracy"]) == 50.0
    assert worst.n_units == 2  # two instances, not six records
    assert worst.stderr == pytest.approx(50 / math.sqrt(2), rel=0.08)
    assert (worst.low, worst.high) == (pytest.approx(0.0), pytest.approx(100.0))


def test_multi_f1_and_exact_match_by_gold_count():
    # q1 gold {A,B} answered "A, B" (exact, F1 1); q2 gold {} answered "A" (wrong, F1 0): multi_f1 50,
    # exact_k2 100, exact_k0 0. Resample {q1,q1}: F1 100 and k0 undefined; {q2,q2}: F1 0, k2 undefined.
    def multi(question: str, gold: list[str], prediction: str) -> dict:
        return {"id": question, "category": "count", "setup": "multi", "answer": gold, **_OPTIONS,
                "format": "gen", "prompt": 1, "prediction": prediction}  # fmt: skip

    records = [multi("q1", ["A", "B"], "A, B"), multi("q2", [], "A")]
    scored = score(records)[0]
    result = headline_intervals("dare", records, bootstrap_resamples=1000, bootstrap_seed=0)
    assert result["multi_f1"].estimate == pytest.approx(scored["multi_f1"]) == 50.0
    assert (result["multi_f1"].low, result["multi_f1"].high) == (0.0, 100.0)
    assert result["multi_exact_k2"].estimate == 100.0 and result["multi_exact_k0"].estimate == 0.0
    # about a quarter of the resamples hold no k0 question: left out and counted
    assert 180 < result["multi_exact_k0"].undefined_resamples < 320
    assert "undefined" in result["multi_exact_k0"].reason


def test_paired_difference_and_the_compare_cli(tmp_path):
    # run B also gets question b right under prompt 2: single_accuracy 66.667 -> 83.333, difference 16.667
    run_a = _two_questions()
    run_b = [dict(r, prediction="B") if (r["id"], r["prompt"]) == ("b", 2) else r for r in run_a]
    difference = paired_difference("dare", run_a, run_b, bootstrap_resamples=500)["single_accuracy"]
    assert difference.estimate == pytest.approx(50 / 3)
    assert difference.estimate_a == pytest.approx(200 / 3) and difference.estimate_b == pytest.approx(250 / 3)
    # only question b changed: the resamples' differences are 0 ({a,a}), 33.33 ({b,b}) or 16.67
    assert (difference.low, difference.high) == (pytest.approx(0.0, abs=1e-9), pytest.approx(100 / 3))
    paths = []
    for name, records in (("a", run_a), ("b", run_b)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        paths.append(str(path))
    done = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "compare", "dare", *paths, "--resamples", "200"],
        cwd=REPO_ROOT, env=offline_environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["paired_bootstrap"]["single_accuracy"]["estimate"] == pytest.approx(50 / 3)
    assert output["paired_bootstrap"]["single_accuracy"]["unit"] == "question"
    # self-comparison: difference 0, p = 1
    same = paired_difference("dare", run_a, run_a, bootstrap_resamples=200)["single_accuracy"]
    assert same.estimate == 0 and same.p_value == 1.0
