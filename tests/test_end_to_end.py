"""The launcher end to end on bundled data: both offline models, the files users read, several processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.reporting.schema import latest_files
from tests.helpers import REPO_ROOT, free_port, offline_environment, results_json, run_launcher, samples_jsonl

pytestmark = pytest.mark.slow

TASK = "hallusionbench_offline_sample"
SAMPLE_QUESTIONS = 29  # lmms_eval_tasks/tasks/hallusionbench/sample: 29 questions, 5 without an image


def _response(sample: dict) -> str:
    """The model's answer in a host samples record (a string, or a one-element list)."""
    response = sample["filtered_resps"]
    return response[0] if isinstance(response, list) else response


def _check_run(output: Path, model_label: str) -> list[dict]:
    results = results_json(output)
    assert TASK in results["results"]
    metrics = results["results"][TASK]
    for name in ("aAcc", "fAcc", "qAcc", "overall"):
        value = metrics[f"{name},none"]
        assert 0.0 <= value <= 100.0, (model_label, name, value)
    assert results["n-samples"][TASK]["effective"] == SAMPLE_QUESTIONS
    samples = samples_jsonl(output, TASK)
    assert len(samples) == SAMPLE_QUESTIONS
    assert sorted(sample["doc_id"] for sample in samples) == list(range(SAMPLE_QUESTIONS))
    return samples


def test_random_guess_baseline_end_to_end(tmp_path: Path) -> None:
    completed = run_launcher(
        "--tasks",
        TASK,
        "--model",
        "random_guess",
        "--model_args",
        "seed=3",
        "--output_path",
        str(tmp_path),
        "--log_samples",
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    samples = _check_run(tmp_path, "random_guess")
    answers = {_response(sample) for sample in samples}
    assert answers <= {"Yes", "No"} and len(answers) == 2  # the task's answer space, both used

    # The pack's own per-question file re-scores to the same numbers without the model.
    pack_samples = latest_files(tmp_path, TASK)["samples"]  # random_guess: no per-model folder
    rescored = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "score", "hallusionbench", str(pack_samples)],
        capture_output=True,
        text=True,
        env=offline_environment(),
        check=True,
    )
    metrics = json.loads(rescored.stdout)
    in_results = results_json(tmp_path)["results"][TASK]
    for name in ("aAcc", "fAcc", "qAcc", "overall", "LH", "VI", "Mixed"):
        assert metrics[name] == pytest.approx(in_results[f"{name},none"]), name


def test_tiny_llava_end_to_end_answers_every_question(tmp_path: Path, tiny_llava_dir: Path) -> None:
    completed = run_launcher(
        "--tasks",
        TASK,
        "--model",
        "llava_hf",
        "--model_args",
        f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
        "--output_path",
        str(tmp_path),
        "--log_samples",
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    samples = _check_run(tmp_path, "llava_hf")
    # The host's llava_hf answers "" to image-less requests unless the pack's fix is installed.
    # The pack's record (under the first metric key) carries the official fields.
    no_image = [sample for sample in samples if sample["aAcc"]["visual_input"] == "0"]
    assert len(no_image) == 5
    assert all(_response(sample).strip() for sample in samples)
    report = reports.read_report(next(tmp_path.rglob(f"lmms_eval_tasks/*/{TASK}_report.json")))
    assert report["metrics"]["empty_predictions"] == 0


def test_accelerate_two_processes_match_one_process(tmp_path: Path) -> None:
    accelerate = Path(shutil.which("accelerate") or REPO_ROOT / ".venv" / "bin" / "accelerate")
    common = ["--tasks", TASK, "--model", "random_guess", "--model_args", "seed=5", "--log_samples"]
    single = run_launcher(*common, "--output_path", str(tmp_path / "one"))
    assert single.returncode == 0, single.stderr[-3000:]

    launched = subprocess.run(
        [
            str(accelerate),
            "launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--main_process_port",
            free_port(),
            "-m",
            "lmms_eval_tasks",
            *common,
            "--output_path",
            str(tmp_path / "two"),
        ],
        capture_output=True,
        text=True,
        env=offline_environment(),
        cwd=REPO_ROOT,
        timeout=900,
        check=False,
    )
    assert launched.returncode == 0, launched.stdout[-3000:] + launched.stderr[-3000:]
    assert "rank 1" in launched.stdout + launched.stderr
    one = results_json(tmp_path / "one")["results"][TASK]
    two = results_json(tmp_path / "two")["results"][TASK]
    numeric = {key: value for key, value in one.items() if isinstance(value, float | int) and value == value}
    assert numeric and all(two[key] == pytest.approx(value) for key, value in numeric.items())
    assert len(samples_jsonl(tmp_path / "two", TASK)) == SAMPLE_QUESTIONS
