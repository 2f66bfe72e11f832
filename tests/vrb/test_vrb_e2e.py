"""VRB end to end: the launcher runs `vrb_sample` with the random baseline and the tiny LLaVA; the results
hold every level's accuracy and the group's sub-metrics; the pack's samples re-score to the same numbers;
`lmms-eval-tasks vre` on both run folders computes VRE over the pool and writes the plots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.input_checks import read_jsonl
from lmms_eval_tasks.tasks.vrb.generate import SAMPLE_TASKS
from lmms_eval_tasks.tasks.vrb.scoring import SUB_METRICS, score
from tests.helpers import results_json, run_launcher

pytestmark = pytest.mark.slow
QUESTIONS = 12  # lmms_eval_tasks/tasks/vrb/sample: 4 scenes x 3 questions


def _run(output: Path, *model: str) -> dict:
    completed = run_launcher("--tasks", "vrb_sample", *model, "--output_path", str(output))
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = results_json(output)
    for task in SAMPLE_TASKS:
        assert results["n-samples"][task]["effective"] == QUESTIONS, task
        assert 0.0 <= results["results"][task]["accuracy,none"] <= 1.0, task
    group = results["results"]["vrb_sample"]
    for key in ("accuracy", "accuracy_clean", "average_error", "error_rate", "average_difference"):
        assert isinstance(group[f"{key},none"], float), key
    # The group's numbers are the scorer's on the union of the level tasks' records (the pack's samples).
    records = read_jsonl(next(output.rglob("lmms_eval_tasks/*/vrb_sample_samples.jsonl")))
    assert len(records) == QUESTIONS * len(SAMPLE_TASKS)
    assert {record["profile"] for record in records} == {"vrb"} and {
        record["seed"] for record in records
    } == {0}
    rescored = score(records)[0]
    for key in ("accuracy", "accuracy_clean", *SUB_METRICS):
        value = group[f"{key},none"]
        assert (value != value and rescored[key] != rescored[key]) or rescored[key] == pytest.approx(value), (
            key
        )
    assert score(records)[1]["accuracy_by_level"]["clean"] == pytest.approx(
        results["results"]["vrb_sample_clean"]["accuracy,none"]
    )
    return results


def test_vrb_sample_baseline_and_tiny_llava_then_vre(tmp_path: Path, tiny_llava_dir: Path, capsys) -> None:
    _run(tmp_path / "random", "--model", "random_guess", "--model_args", "seed=0")
    llava = _run(
        tmp_path / "llava",
        "--model", "llava_hf", "--model_args", f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
    )  # fmt: skip
    assert llava["results"]["vrb_sample_clean"]["accuracy,none"] >= 0.0

    from lmms_eval_tasks.cli import main

    plots = tmp_path / "plots"
    assert (
        main(["vre", f"random={tmp_path / 'random'}", f"llava={tmp_path / 'llava'}", "--plots", str(plots)])
        == 0
    )
    output = json.loads(capsys.readouterr().out)
    assert set(output["models"]) == {"random", "llava"}
    assert set(output["corruptions"]) == {"gaussian_noise", "defocus_blur", "brightness"}
    assert output["pool"]["vre_computed"] is True and output["pool"]["cells"] == 6
    for entry in output["models"].values():
        assert set(SUB_METRICS) | {
            "vre",
            "accuracy_clean",
            "accuracy_average",
            "relative_accuracy_drop",
        } <= set(entry)
    clean = llava["results"]["vrb_sample_clean"]["accuracy,none"]
    assert output["models"]["llava"]["accuracy_clean"] == pytest.approx(clean)
    written = sorted(path.name for path in plots.iterdir())
    assert written == sorted(
        ["error_vs_severity_llava.png", "error_vs_severity_random.png", "radar_corruption_classes.png",
         "radar_models.png"]
    )  # fmt: skip
