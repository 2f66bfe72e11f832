"""Independent audit of the VRB metrics against the spec (hand-computed numbers; arithmetic in comments)."""

from __future__ import annotations

import copy
import math
import random
from pathlib import Path

import numpy as np
import pytest

from lmms_eval_tasks.tasks.vrb import cli_vre as vre_command
from lmms_eval_tasks.tasks.vrb import scoring as vrb

# ---- VQA accuracy -------------------------------------------------------------------------------------


def test_normalisation_number_words_articles_punctuation_contractions() -> None:
    # number word -> digit, trailing period dropped, article dropped, contraction table applied
    assert vrb.normalize_answer("Two.") == "2"
    assert vrb.normalize_answer("the dog") == "dog"
    assert vrb.normalize_answer("An Apple!") == "apple"
    assert vrb.normalize_answer("dont") == "don't"
    assert vrb.normalize_answer("none") == "0"
    # "2.5" keeps its period (followed by a digit); "1,000" loses its comma (digit comma rule)
    assert vrb.normalize_answer("2.5") == "2.5"
    assert vrb.normalize_answer("1,000") == "1000"
    # "-" with no surrounding space becomes a space: "t-shirt" -> "t shirt"
    assert vrb.normalize_answer("t-shirt") == "t shirt"


@pytest.mark.parametrize(
    ("matching", "expected"),
    [
        # leave-one-out over 10 annotators, m matches: m * min((m-1)/3, 1) + (10-m) * min(m/3, 1), / 10
        (0, 0.0),
        (1, (1 * 0 + 9 * (1 / 3)) / 10),  # 0.3
        (2, (2 * (1 / 3) + 8 * (2 / 3)) / 10),  # (0.6667 + 5.3333) / 10 = 0.6
        (3, (3 * (2 / 3) + 7 * 1) / 10),  # (2 + 7) / 10 = 0.9
        (4, 1.0),  # 4 * min(3/3,1) + 6 * 1 = 10 -> 1.0
        (10, 1.0),
    ],
)
def test_leave_one_out_vqa_accuracy(matching: int, expected: float) -> None:
    answers = ["cat"] * matching + ["dog"] * (10 - matching)
    assert vrb.vqa_accuracy("Cat.", answers) == pytest.approx(expected)
    matches = [True] * matching + [False] * (10 - matching)
    assert vrb.leave_one_out_accuracy(matches) == pytest.approx(expected)


def test_official_protocol_is_case_sensitive_exact_match_on_mc_answer() -> None:
    answers = ["yes"] * 10
    assert vrb.vqa_accuracy("yes", answers, "yes", protocol="official") == 1.0
    assert vrb.vqa_accuracy("Yes", answers, "yes", protocol="official") == 0.0  # case-sensitive
    assert vrb.vqa_accuracy("yes.", answers, "yes", protocol="official") == 0.0  # no normalisation


_VOCAB = [
    "two", "2", "Two.", "the dog", "dog", "a dog", "dogs", "yes", "Yes", "yes!", "no", "none", "0",
    "dont", "don't", "isnt", "t-shirt", "t shirt", "1,000", "1000", "2.5", "red/white", "red white",
    "(red)", "what's", "whats", "an apple", "apple", "ten", "10", "3 ", " three", "left-hand", "mr. smith",
    "Mr Smith", "hot dog?", "hot dog", "it's", "its", "ok", "o.k.", "100%", "#1", "one", "1",
]  # fmt: skip


def test_paper_accuracy_equals_host_vqav2_on_random_cases() -> None:
    """The paper protocol must equal lmms-eval's own vqav2 accuracy (EvalAI normalisation) case by case."""
    host = pytest.importorskip("lmms_eval.tasks.vqav2.utils")
    rng = random.Random(20260101)
    mismatches = []
    for case in range(3000):
        answers = [rng.choice(_VOCAB) for _ in range(10)]
        prediction = rng.choice(_VOCAB + ["  " + rng.choice(_VOCAB) + "\n"])
        doc = {
            "question_id": case,
            "answers": [{"answer": a, "answer_id": i + 1} for i, a in enumerate(answers)],
        }
        expected = host.vqav2_process_results(copy.deepcopy(doc), [prediction])["exact_match"]
        actual = vrb.vqa_accuracy(prediction, answers)
        if not math.isclose(actual, expected, abs_tol=1e-12):
            mismatches.append((prediction, answers, expected, actual))
    assert mismatches == []


def test_paper_accuracy_through_score_records_equals_vqa_accuracy() -> None:
    rng = random.Random(7)
    records, expected = [], []
    for qid in range(300):
        answers = [rng.choice(_VOCAB) for _ in range(10)]
        prediction = rng.choice(_VOCAB)
        records.append(_record(qid, answers, prediction, "clean", 0))
        expected.append(vrb.vqa_accuracy(prediction, answers))
    metrics = vrb.score(records)[0]
    assert metrics["accuracy"] == pytest.approx(sum(expected) / len(expected))


# ---- sub-metrics: level ranges ----------------------------------------------------------------------------


def test_sub_metrics_linear_curve() -> None:
    # A = [.8,.6,.5,.4,.3,.2] -> E = [.2,.4,.5,.6,.7,.8]
    raw = vrb.sub_metrics(np.array([0.8, 0.6, 0.5, 0.4, 0.3, 0.2]))
    assert raw["first_drop"] == pytest.approx(1.0)  # (.4 - .2) / .2
    assert raw["range_of_error"] == pytest.approx(3.0)  # (.8 - .2) / .2, levels 0..5
    # slope: sum (l - 2.5) E_l / sum (l - 2.5)^2
    #   = (-2.5*.2 - 1.5*.4 - .5*.5 + .5*.6 + 1.5*.7 + 2.5*.8) / 17.5 = 2.0 / 17.5
    assert raw["error_rate"] == pytest.approx(2.0 / 17.5)
    assert raw["average_error"] == pytest.approx(3.2 / 6)  # (.2+.4+.5+.6+.7+.8)/6, clean included
    assert raw["average_difference"] == pytest.approx(0.4)  # mean(.2,.3,.4,.5,.6), levels 1..5
    assert raw["accuracy_average"] == pytest.approx(2.8 / 6)  # mean of A over 0..5
    assert raw["relative_accuracy_drop"] == pytest.approx((0.8 - 2.8 / 6) / 0.8)  # 0.416667


def test_range_of_error_includes_clean_level_and_first_drop_can_be_negative() -> None:
    # E = [.6,.3,.4,.4,.5,.5]: over 0..5 R = (.6 - .3)/.3 = 1.0 (over 1..5 it would be (.5-.3)/.3 = .667)
    raw = vrb.sub_metrics(np.array([0.4, 0.7, 0.6, 0.6, 0.5, 0.5]))
    assert raw["range_of_error"] == pytest.approx(1.0)
    assert raw["first_drop"] == pytest.approx(-0.5)  # (.3 - .6)/.6
    # Delta = mean(-.3,-.2,-.2,-.1,-.1) = -.18
    assert raw["average_difference"] == pytest.approx(-0.18)


def test_zero_clean_error_gives_undefined_first_drop_not_a_number() -> None:
    raw = vrb.sub_metrics(np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.5]))
    assert math.isnan(raw["first_drop"]) and math.isnan(raw["range_of_error"])
    assert raw["average_difference"] == pytest.approx(0.3)  # mean(.1,.2,.3,.4,.5)


# ---- VRE ---------------------------------------------------------------------------------------------------

# Linear error curves E_l = e0 + s*l give F = s/e0, R = 5s/e0, rho = s, mu = e0 + 2.5 s, Delta = 3 s.
#   (a,x) e0=.2 s=.02: F .1   R .5   rho .02 mu .25 Delta .06
#   (a,y) e0=.2 s=.04: F .2   R 1.0  rho .04 mu .30 Delta .12
#   (b,x) e0=.4 s=.02: F .05  R .25  rho .02 mu .45 Delta .06
#   (b,y) e0=.4 s=.08: F .2   R 1.0  rho .08 mu .60 Delta .24
# Min-max (low = 0 = most robust): F ax 1/3 ay 1 bx 0 by 1; R same; rho ax 0 ay 1/3 bx 0 by 1;
#   mu ax 0 ay 1/7 bx 4/7 by 1; Delta ax 0 ay 1/3 bx 0 by 1.
# Model a means: 2/3, 2/3, 1/6, 1/14, 1/6 (sum 73/42); b: .5, .5, .5, 11/14, .5 (sum 39/14).
# Corruption x: 1/6, 1/6, 0, 2/7, 0 (sum 13/21); y: 1, 1, 2/3, 4/7, 2/3 (sum 82/21).


def _curve(e0: float, slope: float) -> list[float]:
    return [1.0 - e0 - slope * level for level in range(6)]


POOL = {
    "a": {"x": _curve(0.2, 0.02), "y": _curve(0.2, 0.04)},
    "b": {"x": _curve(0.4, 0.02), "y": _curve(0.4, 0.08)},
}


def test_vre_default_weights_min_max_direction() -> None:
    result = vrb.robustness(POOL)
    assert result["pool"]["weights"] == pytest.approx(dict.fromkeys(vrb.SUB_METRICS, 0.2))
    assert result["cells"]["a"]["x"]["scaled"]["average_error"] == pytest.approx(0.0)
    assert result["cells"]["b"]["x"]["scaled"]["average_error"] == pytest.approx(4 / 7)
    assert result["models"]["a"]["vre"] == pytest.approx(0.2 * 73 / 42)  # 0.347619
    assert result["models"]["b"]["vre"] == pytest.approx(0.2 * 39 / 14)  # 0.557143
    assert result["corruptions"]["x"]["vre"] == pytest.approx(0.2 * 13 / 21)  # 0.123810
    assert result["corruptions"]["y"]["vre"] == pytest.approx(0.2 * 82 / 21)  # 0.780952


def test_vre_preferences_softmax_paper_example_06_01() -> None:
    # softmax([ln 6, 0, 0, 0, 0]) = [6, 1, 1, 1, 1] / 10 = [.6, .1, .1, .1, .1] (the paper's example)
    weights = vrb.softmax_weights([math.log(6), 0, 0, 0, 0])
    assert weights == pytest.approx([0.6, 0.1, 0.1, 0.1, 0.1])
    result = vrb.robustness(POOL, preferences=[math.log(6), 0, 0, 0, 0])
    # VRE_a = .6 * 2/3 + .1 * (2/3 + 1/6 + 1/14 + 1/6) = .4 + .1 * 15/14 = 0.507143
    assert result["models"]["a"]["vre"] == pytest.approx(0.4 + 0.1 * 15 / 14)
    # explicit weights equal to the softmax give the same VRE
    explicit = vrb.robustness(POOL, weights=[0.6, 0.1, 0.1, 0.1, 0.1])
    assert explicit["models"]["a"]["vre"] == pytest.approx(result["models"]["a"]["vre"])


def test_relative_accuracy_drops_and_means() -> None:
    result = vrb.robustness(POOL)
    # A_ax = 1 - mu = .75, A_ay = .70, A_bx = .55, A_by = .40; clean a = .8, b = .6
    assert result["models"]["a"]["accuracy_average"] == pytest.approx(0.725)  # (.75 + .70)/2
    assert result["models"]["a"]["relative_accuracy_drop"] == pytest.approx((0.8 - 0.725) / 0.8)  # .09375
    # A^rel_x = sum_v (A_v0 - A_vx) / sum_v A_v0 = (.05 + .05) / 1.4
    assert result["corruptions"]["x"]["relative_accuracy_drop"] == pytest.approx(0.1 / 1.4)
    # A_c = mean over models: A_x = (.75 + .55)/2 = .65
    assert result["corruptions"]["x"]["accuracy_average"] == pytest.approx(0.65)
    # raw sub-metric of a model = mean over its corruptions: F_a = (.1 + .2)/2
    assert result["models"]["a"]["first_drop"] == pytest.approx(0.15)


def test_one_model_one_corruption_pool_keeps_raw_sub_metrics_and_null_vre() -> None:
    result = vrb.robustness({"m": {"x": _curve(0.2, 0.02)}})
    assert result["models"]["m"]["vre"] is None
    assert result["models"]["m"]["first_drop"] == pytest.approx(0.1)  # .02/.2
    assert result["models"]["m"]["average_error"] == pytest.approx(0.25)  # .2 + 2.5*.02


def test_constant_sub_metric_scales_to_zero_and_is_noted() -> None:
    # both corruptions same e0 and slope -> every sub-metric constant over the pool
    result = vrb.robustness({"m": {"x": _curve(0.2, 0.02), "y": _curve(0.2, 0.02)}})
    assert result["models"]["m"]["vre"] == pytest.approx(0.0)
    assert any("constant" in note for note in result["notes"])


def test_nan_accuracy_is_rejected() -> None:
    with pytest.raises(ValueError):
        vrb.robustness({"m": {"x": [0.8, float("nan"), 0.7, 0.6, 0.5, 0.4]}})


# ---- harness group (score_records on the union) equals the `vre` command on the same run -------------------


def _record(qid: int, answers: list[str], prediction: str, corruption: str, severity: int) -> dict:
    return {
        "question_id": qid,
        "answers": answers,
        "multiple_choice_answer": answers[0],
        "question_type": "what",
        "answer_type": "other",
        "corruption": corruption,
        "severity": severity,
        "prediction": prediction,
    }


def test_group_metrics_equal_vre_command(tmp_path) -> None:
    rng = random.Random(3)
    records = []
    for qid in range(40):
        answers = [rng.choice(["cat", "dog", "two", "2"]) for _ in range(10)]
        records.append(_record(qid, answers, rng.choice(["cat", "dog", "2"]), "clean", 0))
        for corruption in ("snow", "zoom_blur"):
            for severity in range(1, 6):
                prediction = rng.choice(["cat", "dog", "2", "x"])
                records.append(_record(qid, answers, prediction, corruption, severity))
    group = {**vrb.score(records)[0], **vrb.score(records)[1]}
    lines = ["model,corruption,severity,accuracy"]
    for level, value in group["accuracy_by_level"].items():
        if level == "clean":
            lines.append(f"m,clean,0,{value!r}")
        else:
            name, severity = level.rsplit("_s", 1)
            lines.append(f"m,{name},{severity},{value!r}")
    path = tmp_path / "pool.csv"
    path.write_text("\n".join(lines) + "\n")
    _, result = vre_command.compute([str(path)])
    for key in (*vrb.SUB_METRICS, "accuracy_average", "relative_accuracy_drop", "vre"):
        assert group[key] == pytest.approx(result["models"]["m"][key]), key


@pytest.mark.slow
def test_harness_group_equals_vre_command_on_the_same_run(tmp_path, capsys) -> None:
    """The launcher's `vrb_sample` group numbers equal `lmms-eval-tasks vre` on that one run folder."""
    import json

    from lmms_eval_tasks.cli import main
    from tests.helpers import results_json, run_launcher

    output = tmp_path / "run"
    completed = run_launcher(
        "--tasks", "vrb_sample", "--model", "random_guess", "--model_args", "seed=1",
        "--output_path", str(output),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    group = results_json(output)["results"]["vrb_sample"]
    assert main(["vre", f"m={output}"]) == 0
    cli = json.loads(capsys.readouterr().out)["models"]["m"]
    for key in ("accuracy_clean", *vrb.SUB_METRICS, "relative_accuracy_drop"):
        value = group.get(f"{key},none")
        if value is None or cli[key] is None:
            assert value is None and cli[key] is None or (value != value and cli[key] is None), key
        else:
            assert value == pytest.approx(cli[key]), key


def _pool_csv(tmp_path) -> str:
    lines = ["model,corruption,severity,accuracy"]
    for model, corruptions in POOL.items():
        lines.append(f"{model},clean,0,{corruptions['x'][0]!r}")
        for name, curve in corruptions.items():
            lines.extend(f"{model},{name},{level},{curve[level]!r}" for level in range(1, 6))
    path = tmp_path / "pool.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_vre_command_preferences_numeric(tmp_path, capsys) -> None:
    import json

    from lmms_eval_tasks.cli import main

    # ln 6 = 1.791759469228055 -> weights .6/.1/.1/.1/.1; VRE_a = .4 + .1 * 15/14 = 0.507143 (see above)
    assert main(["vre", _pool_csv(tmp_path), "--preferences", "1.791759469228055,0,0,0,0"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["models"]["a"]["vre"] == pytest.approx(0.4 + 0.1 * 15 / 14)
    assert output["pool"]["weights"]["first_drop"] == pytest.approx(0.6)


def test_vre_command_preferences_as_documented(tmp_path, capsys) -> None:
    import json

    from lmms_eval_tasks.cli import main

    # docs/vrb.md: `--preferences ln6,0,0,0,0`; softmax(ln 6, 0, 0, 0, 0) = (6, 1, 1, 1, 1) / 10
    assert main(["vre", _pool_csv(tmp_path), "--preferences", "ln6,0,0,0,0"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["pool"]["weights"]["first_drop"] == pytest.approx(0.6)
    assert output["pool"]["weights"]["range_of_error"] == pytest.approx(0.1)
    assert output["models"]["a"]["vre"] == pytest.approx(0.4 + 0.1 * 15 / 14)  # as with 1.7917...
    # ln of a non-positive number is refused with the syntax in the message
    with pytest.raises(SystemExit):
        main(["vre", _pool_csv(tmp_path), "--preferences", "ln0,0,0,0,0"])
    assert "ln<number>, e.g. ln6" in capsys.readouterr().err


def test_vre_scale_100_applies_to_csv_input(tmp_path, capsys) -> None:
    import json

    from lmms_eval_tasks.cli import main

    # the same pool in percent: without --scale the error names the fix; with --scale 100 the numbers equal
    fractions = _pool_csv(tmp_path)
    assert main(["vre", fractions]) == 0
    expected = json.loads(capsys.readouterr().out)
    lines = Path(fractions).read_text().splitlines()
    percent = [lines[0]] + [
        ",".join([*row.split(",")[:3], repr(100 * float(row.split(",")[3]))]) for row in lines[1:]
    ]
    percent_csv = tmp_path / "percent.csv"
    percent_csv.write_text("\n".join(percent) + "\n")
    assert main(["vre", str(percent_csv)]) == 2
    assert "use --scale 100 for %" in capsys.readouterr().err
    assert main(["vre", str(percent_csv), "--scale", "100"]) == 0
    scaled = json.loads(capsys.readouterr().out)
    for model, values in expected["models"].items():
        for key, value in values.items():
            assert scaled["models"][model][key] == pytest.approx(value, abs=1e-12), (model, key)


def test_vre_scale_must_be_a_positive_finite_number(tmp_path, capsys) -> None:
    from lmms_eval_tasks.cli import main

    # --scale inf divided every accuracy to 0.0 and printed metrics of an all-wrong model (exit 0)
    for bad in ("inf", "1e309", "nan", "0", "-1", "tdiuc=inf"):
        assert main(["vre", _pool_csv(tmp_path), "--scale", bad]) == 2, bad
        assert "must be a positive finite number" in capsys.readouterr().err.splitlines()[-1], bad


def test_docs_name_the_vqav2_copy_the_host_reads() -> None:
    # the host 0.7.3's VQAv2 template names its dataset; docs/vrb.md must name that copy, not another
    import lmms_eval

    template = Path(lmms_eval.__file__).parent / "tasks" / "vqav2" / "_default_template_vqav2_yaml"
    host_path = next(
        line.split(":", 1)[1].strip()
        for line in template.read_text().splitlines()
        if line.startswith("dataset_path:")
    )
    assert host_path == "lmms-lab-encoder/VQAv2"
    docs = (Path(__file__).parents[2] / "docs" / "vrb.md").read_text()
    assert f"Data: the Hugging Face copy the host's VQAv2 tasks read, `{host_path}`" in docs
    # and the pack's VRB tasks read that same copy
    from lmms_eval_tasks.tasks.vrb.generate import VQAV2_DATASET

    assert VQAV2_DATASET == host_path
