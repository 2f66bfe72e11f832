"""Every benchmark's standard errors, checked against numbers computed by hand, and their plumbing: the
``score`` output, ``compare``'s paired bootstrap, and the host's Stderr column of a real launcher run."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from lmms_eval_tasks.framework.intervals import headline_intervals, paired_difference
from tests.helpers import REPO_ROOT, offline_environment, results_json, run_launcher


def _tdiuc(correct: list[bool], prefix: str = "q") -> list[dict]:
    """TDIUC records, all "color" questions labelled "red"; correct ones answer "red", the others "zzz"."""
    return [
        {"question_id": f"{prefix}{i}", "question_type": "color", "labeled_answer": "red",
         "prediction": "red" if right else "zzz"}
        for i, right in enumerate(correct)
    ]  # fmt: skip


def test_tdiuc_micro_accuracy_stderr_matches_the_binomial_one():
    # 400 questions, 100 right: p = 0.25, analytic stderr 100 * sqrt(.25 * .75 / 400) = 2.1651 points;
    # the bootstrap targets sqrt((n-1)/n) of it (2.1624) with ~2% sampling error at 1,000 resamples.
    records = _tdiuc([i % 4 == 0 for i in range(400)])
    result = headline_intervals("tdiuc", records, bootstrap_resamples=1000, bootstrap_seed=0)
    micro = result["micro_accuracy"]
    assert micro.estimate == pytest.approx(25.0)
    assert micro.stderr == pytest.approx(100 * math.sqrt(0.25 * 0.75 / 400), rel=0.08)
    assert micro.unit == "question" and micro.n_units == 400 and micro.seed == 0 and micro.n_resamples == 1000
    assert micro.low < 25.0 < micro.high
    # one type only: macro = micro = accuracy_color, the same resamples give the same numbers
    assert result["macro_accuracy"].stderr == pytest.approx(micro.stderr)
    assert result["accuracy_color"].stderr == pytest.approx(micro.stderr)


def test_the_seed_is_recorded_and_reproduces():
    records = _tdiuc([i % 3 == 0 for i in range(60)])
    one = headline_intervals("tdiuc", records, bootstrap_resamples=200, bootstrap_seed=5)
    two = headline_intervals("tdiuc", records, bootstrap_resamples=200, bootstrap_seed=5)
    other = headline_intervals("tdiuc", records, bootstrap_resamples=200, bootstrap_seed=6)
    assert one["micro_accuracy"].as_dict() == two["micro_accuracy"].as_dict()
    assert one["micro_accuracy"].stderr != other["micro_accuracy"].stderr
    assert one["micro_accuracy"].seed == 5


def test_bad_bootstrap_options_fail_in_one_line():
    from lmms_eval_tasks.framework.input_checks import OptionError

    with pytest.raises(OptionError, match="bootstrap_resamples"):
        headline_intervals("tdiuc", _tdiuc([True, False]), bootstrap_resamples=-3)
    with pytest.raises(OptionError, match="bootstrap_seed"):
        headline_intervals("tdiuc", _tdiuc([True, False]), bootstrap_seed="x")
    assert headline_intervals("tdiuc", _tdiuc([True, False]), bootstrap_resamples=0) == {}


def test_tallyqa_rmse_from_summed_squared_errors():
    # simple split, 2 questions: answer 2 predicted 5 (error 9) and answer 1 predicted 1 (0): RMSE sqrt(4.5)
    records = [
        {"question_id": "a", "answer": 2, "issimple": True, "prediction": "5"},
        {"question_id": "b", "answer": 1, "issimple": True, "prediction": "1"},
    ]
    result = headline_intervals("tallyqa", records, bootstrap_resamples=500)
    assert result["simple_rmse"].estimate == pytest.approx(math.sqrt(4.5))
    # resamples: {a,a} -> 3, {b,b} -> 0, {a,b} -> sqrt(4.5): the interval spans 0 .. 3
    assert result["simple_rmse"].low == pytest.approx(0.0) and result["simple_rmse"].high == pytest.approx(
        3.0
    )
    assert result["simple_micro_accuracy"].estimate == pytest.approx(50.0)


def _hallusionbench(groups: int, right_groups: set[int]) -> list[dict]:
    """VD records: each figure group (set) has 2 figures x 2 questions; a group is all right or all wrong."""
    records = []
    for s in range(groups):
        for figure in ("0", "1"):
            for question in ("0", "1"):
                gt = "1" if figure == "0" else "0"
                right = s in right_groups
                records.append({
                    "category": "VD", "subcategory": "figure", "visual_input": "1", "set_id": str(s),
                    "figure_id": figure, "question_id": question, "question": "q?", "gt_answer": gt,
                    "gt_answer_details": "", "prediction": "x", "filename": f"{s}_{figure}.png",
                    "judge_verdict": "correct" if right else "incorrect", "judge_same": True,
                })  # fmt: skip
    return records


def test_hallusionbench_clustered_interval_is_wider_than_naive():
    # 40 figure groups, 10 right: aAcc 25% over 160 questions. Questions of a group move together, so
    # the cluster standard error is that of 40 units, 100 * sqrt(.25 * .75 / 40) = 6.85, not of 160
    # independent questions, 100 * sqrt(.25 * .75 / 160) = 3.42.
    records = _hallusionbench(40, set(range(10)))
    result = headline_intervals("hallusionbench", records, bootstrap_resamples=1000)
    a_acc = result["aAcc"]
    assert a_acc.estimate == pytest.approx(25.0) and a_acc.unit == "figure group" and a_acc.n_units == 40
    naive = 100 * math.sqrt(0.25 * 0.75 / 160)
    assert a_acc.stderr > 1.5 * naive
    assert a_acc.stderr == pytest.approx(100 * math.sqrt(0.25 * 0.75 / 40), rel=0.1)
    assert result["fAcc"].estimate == pytest.approx(25.0) and result["qAcc"].estimate == pytest.approx(25.0)


def test_contextual_keeps_the_official_normal_interval():
    from lmms_eval_tasks.tasks.contextual.scoring import CATEGORIES

    # 50 items, 20 accepted: p = .4, stderr 100 * sqrt(.4 * .6 / 50) = 6.9282, interval 40 +- 1.96 * that
    records = [
        {"image_url": f"u{i}", "instruction": "i", "response": "r",
         "category": CATEGORIES[i % len(CATEGORIES)],
         "prediction": "p", "judge_verdict": i < 20}
        for i in range(50)
    ]  # fmt: skip
    result = headline_intervals("contextual", records, bootstrap_resamples=200, rouge=False)
    rate = result["acceptance_rate"]
    assert rate.method == "normal" and rate.estimate == pytest.approx(40.0)
    assert rate.stderr == pytest.approx(100 * math.sqrt(0.4 * 0.6 / 50))
    assert rate.low == pytest.approx(40 - 1.959964 * 6.928203, abs=1e-3)


def _vrb(images: int, seed: int = 0) -> list[dict]:
    """Synthetic VRB records: 2 questions per image at clean + 2 corruptions x 5 severities."""
    rng = np.random.default_rng(seed)
    records = []
    for image in range(images):
        for question in range(2):
            qid = image * 10 + question
            for corruption, severity in [("clean", 0)] + [
                (c, s) for c in ("fog", "snow") for s in range(1, 6)
            ]:
                right = rng.random() < 0.8 - 0.05 * severity
                records.append({
                    "question_id": qid, "image_id": image, "answers": ["yes"] * 10,
                    "multiple_choice_answer": "yes", "question_type": "is", "answer_type": "yes/no",
                    "corruption": corruption, "severity": severity, "prediction": "yes" if right else "no",
                })  # fmt: skip
    return records


def test_vrb_point_estimates_equal_the_scorer_and_images_are_the_unit():
    from lmms_eval_tasks.tasks.vrb.scoring import score

    records = _vrb(30)
    metrics = score(records)[0]
    result = headline_intervals("vrb", records, bootstrap_resamples=200)
    for name in (
        "accuracy",
        "accuracy_clean",
        "first_drop",
        "error_rate",
        "average_error",
        "relative_accuracy_drop",
    ):
        assert result[name].estimate == pytest.approx(metrics[name], abs=1e-9), name
        assert result[name].unit == "image" and result[name].n_units == 30
    # old records without image_id stay scorable: resampled by question, and the report says so
    for record in records:
        record.pop("image_id")
    fallback = headline_intervals("vrb", records, bootstrap_resamples=50)
    assert fallback["accuracy"].unit == "question" and "no image_id" in fallback["accuracy"].reason


def test_paired_difference_of_a_run_with_itself_is_zero_with_p_one():
    records = _tdiuc([i % 4 == 0 for i in range(100)])
    result = paired_difference("tdiuc", records, records, bootstrap_resamples=200)
    assert result["micro_accuracy"].estimate == 0 and result["micro_accuracy"].p_value == 1.0


def test_vrb_paired_difference_refuses_runs_with_other_corrupted_images():
    # same questions, levels and predictions, but run B's images were corrupted with another seed (or
    # another profile): its "fog 3" is another image, so pairing the two runs by question is meaningless
    run_a = [{**record, "profile": "vrb", "seed": 0} for record in _vrb(5)]
    assert paired_difference("vrb", run_a, run_a, bootstrap_resamples=50)["accuracy"].estimate == 0
    for change in ({"seed": 1}, {"profile": "imagecorruptions"}):
        run_b = [{**record, **change} for record in run_a]
        with pytest.raises(ValueError, match="different records"):
            paired_difference("vrb", run_a, run_b, bootstrap_resamples=50)


def test_paired_difference_refuses_runs_with_different_records():
    with pytest.raises(ValueError, match="different records"):
        paired_difference("tdiuc", _tdiuc([True] * 10), _tdiuc([True] * 10, prefix="other"))


def test_score_cli_prints_stderr_and_the_uncertainty_block(tmp_path, capsys):
    from lmms_eval_tasks.cli import main

    path = tmp_path / "records.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in _tdiuc([i % 2 == 0 for i in range(20)])), encoding="utf-8"
    )
    assert main(["score", "tdiuc", str(path), "-o", "bootstrap_resamples=300"]) == 0
    output = json.loads(capsys.readouterr().out)
    block = output["uncertainty"]["micro_accuracy"]
    assert block["n_resamples"] == 300 and block["seed"] == 0 and block["unit"] == "question"
    assert output["micro_accuracy_stderr"] == block["stderr"] > 0
    assert block["low"] < output["micro_accuracy"] < block["high"]


SAMPLE_TASKS = {
    "tdiuc": "tdiuc_sample", "tallyqa": "tallyqa_sample", "dvqa": "dvqa_sample", "vqdv1": "vqdv1_sample",
    "hallusionbench": "hallusionbench_sample", "contextual": "contextual_sample", "vrb": "vrb_sample_clean",
}  # fmt: skip


@pytest.mark.slow
def test_launcher_run_fills_the_host_stderr_column_and_compare_works(tmp_path, monkeypatch, capsys):
    from lmms_eval_tasks.cli import main

    tasks = ",".join(SAMPLE_TASKS.values())
    runs = {}
    for seed in (0, 1):
        out = tmp_path / f"seed{seed}"
        completed = run_launcher(
            "--tasks", tasks, "--model", "random_guess", "--model_args", f"seed={seed}",
            "--output_path", str(out), "--log_samples",
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-3000:]
        runs[seed] = out
    results = results_json(runs[0])["results"]
    stderr = results["tdiuc_sample"]["micro_accuracy_stderr,none"]
    assert isinstance(stderr, float) and stderr > 0
    assert isinstance(results["hallusionbench_sample"]["aAcc_stderr,none"], float)
    assert results["tallyqa_sample"]["unparsed_stderr,none"] == "N/A"  # a count has no interval
    # `lmms-eval-tasks compare` in this process (14 calls: a process each re-imported the pack and reloaded
    # WordNet), in the environment the launcher runs had (offline, the rule judge, no OpenAI settings)
    for name, value in offline_environment().items():
        monkeypatch.setenv(name, value)
    for name in set(os.environ) - set(offline_environment()):
        monkeypatch.delenv(name)
    monkeypatch.chdir(REPO_ROOT)
    capsys.readouterr()
    for benchmark, task in SAMPLE_TASKS.items():
        for a, b in ((0, 1), (0, 0)):
            code = main(
                ["compare", benchmark, str(runs[a]), str(runs[b]), "--task", task, "--resamples", "200"]
            )
            printed = capsys.readouterr()
            assert code == 0, (benchmark, printed.err[-2000:])
            paired = json.loads(printed.out)["paired_bootstrap"]
            assert paired, benchmark
            if a == b:
                for name, entry in paired.items():
                    if entry["estimate"] is not None:
                        assert entry["estimate"] == 0 and entry["p_value"] in (1.0, None), (benchmark, name)
