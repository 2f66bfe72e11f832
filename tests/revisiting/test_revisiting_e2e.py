"""TDIUC, TallyQA and DVQA end to end: the launcher runs the three ``_sample`` tasks with the random baseline
and the tiny llava_hf, and the full task on a folder made by ``prepare``."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.reporting.schema import read_report
from tests.helpers import offline_environment, results_json, run_launcher

pytestmark = pytest.mark.slow
SAMPLES = {"tdiuc": "tdiuc_sample", "tallyqa": "tallyqa_sample", "dvqa": "dvqa_sample"}
SIZES = {"tdiuc_sample": 15, "tallyqa_sample": 15, "dvqa_sample": 19}


def pack_samples(output: Path, task: str) -> Path:
    return next(output.rglob(f"lmms_eval_tasks/*/{task}_samples.jsonl"))


def pack_records(output: Path, task: str) -> list[dict]:
    text = pack_samples(output, task).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def check_task(output: Path, benchmark: str, task: str) -> list[dict]:
    """The host's numbers equal the pack scorer re-run on the pack's samples file."""
    results = results_json(output)["results"][task]
    records = pack_records(output, task)
    assert len(records) == SIZES[task]
    rescored = get_benchmark(benchmark).score(records)[0]
    for key in get_benchmark(benchmark).headline_metrics:
        value, expected = results[f"{key},none"], rescored[key]
        assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected), (task, key)
    return records


def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", *arguments],
        capture_output=True,
        text=True,
        check=False,
        env=offline_environment(),
    )


def test_random_baseline_on_the_three_samples(tmp_path: Path) -> None:
    output = tmp_path / "random"
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--tasks", ",".join(SAMPLES.values()),
        "--output_path", str(output), "--log_samples",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    for benchmark, task in SAMPLES.items():
        check_task(output, benchmark, task)
    # TallyQA's report carries the accuracy by true count and its plot
    report = read_report(next(output.rglob("lmms_eval_tasks/*/tallyqa_sample_report.json")))
    assert set(report["details"]["accuracy_by_count"]) == {"simple", "complex"}
    assert Path(report["details"]["accuracy_by_count_plot"]).read_bytes()[:4] == b"\x89PNG"
    assert "bundled generated sample data, not the tallyqa slim subset" in report["provenance"]["deviations"]
    assert any("true RMSE" in item for item in report["provenance"]["deviations"])
    # `score` re-scores the pack's samples file; `compare` pairs it with a run that answers every label
    scored = cli("score", "dvqa", str(pack_samples(output, "dvqa_sample")))
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["micro_accuracy"] == pytest.approx(
        results_json(output)["results"]["dvqa_sample"]["micro_accuracy,none"]
    )
    baseline = pack_records(output, "tdiuc_sample")
    oracle = [{**record, "prediction": record["labeled_answer"]} for record in baseline]
    oracle_file = tmp_path / "oracle.jsonl"
    oracle_file.write_text("".join(json.dumps(record) + "\n" for record in oracle), encoding="utf-8")
    # run A named by its output folder (the latest complete run's samples file), run B by a file
    compared = cli("compare", "tdiuc", str(output), str(oracle_file), "--task", "tdiuc_sample")
    assert compared.returncode == 0, compared.stderr
    result = json.loads(compared.stdout)
    from lmms_eval_tasks.tasks.tdiuc.scoring import per_question_correct

    right = sum(per_question_correct(baseline).values())
    # the oracle is right everywhere: b01 = the baseline's wrong answers, b10 = 0; exact test below 25 pairs
    assert (result["b01"], result["b10"], result["both_correct"]) == (15 - right, 0, right)
    assert result["accuracy_b"] == 100.0 and result["method"] == "exact binomial (two-sided)"
    assert result["p_value"] == pytest.approx(min(1.0, 2 * 0.5 ** (15 - right)))


def test_tiny_llava_on_the_revisiting_sample_group(tmp_path: Path, tiny_llava_dir: Path) -> None:
    output = tmp_path / "llava"
    completed = run_launcher(
        "--model", "llava_hf", "--model_args", f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
        "--tasks", "revisiting_sample", "--output_path", str(output), "--log_samples",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    for benchmark, task in SAMPLES.items():
        records = check_task(output, benchmark, task)
        assert all(isinstance(record["prediction"], str) for record in records)
    assert "vqdv1_sample" in results_json(output)["results"]  # the group's fourth member
    # the llava15 prompt variant reached the model (TDIUC: no space after the question's comma)
    host_samples = next(output.rglob("*_samples_tdiuc_sample.jsonl")).read_text(encoding="utf-8")
    assert "What color is the circle?,Please answer the question in one word" in host_samples


def test_full_task_on_a_prepared_folder(tmp_path: Path) -> None:
    from lmms_eval_tasks.framework.preparing import preparers
    from lmms_eval_tasks.tasks.tallyqa.make_sample import rows

    images = tmp_path / "images"
    entries = []
    for row in rows():
        (images / row["image_file"]).parent.mkdir(parents=True, exist_ok=True)
        (images / row["image_file"]).write_bytes(row["image"]["bytes"])
        entry = {key: value for key, value in row.items() if key not in ("image", "image_file")}
        entries.append({**entry, "image": row["image_file"]})
    annotations = tmp_path / "test.json"
    annotations.write_text(json.dumps(entries), encoding="utf-8")
    prepared = tmp_path / "prepared"
    preparers()["tallyqa"].prepare(annotations, images, prepared, progress=False)

    missing = run_launcher(
        "--model", "random_guess", "--tasks", "tallyqa", "--output_path", str(tmp_path / "none"),
        environment=offline_environment(LMMS_EVAL_TASKS_DATA_TALLYQA="", LMMS_EVAL_TASKS_DATA=""),
    )  # fmt: skip
    assert missing.returncode != 0
    assert "lmms-eval-tasks prepare tallyqa" in missing.stdout + missing.stderr

    output = tmp_path / "out"
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--tasks", "tallyqa",
        "--output_path", str(output), "--log_samples",
        environment=offline_environment(
            LMMS_EVAL_TASKS_DATA_TALLYQA=str(prepared), LMMS_EVAL_TASKS_TALLYQA_PROTOCOL="official"
        ),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    records = pack_records(output, "tallyqa")
    assert sorted(record["question_id"] for record in records) == sorted(
        entry["question_id"] for entry in entries
    )
    results = results_json(output)["results"]["tallyqa"]
    from lmms_eval_tasks.tasks.tallyqa.scoring import score

    official = score(records, protocol="official")[0]
    assert results["micro_accuracy,none"] == pytest.approx(official["micro_accuracy"])
    assert math.isnan(results["simple_rmse,none"])  # official protocol: the script's MSE, no rmse key
    report = read_report(next(output.rglob("lmms_eval_tasks/*/tallyqa_report.json")))
    assert report["provenance"]["settings"]["score_options"] == {"protocol": "official"}
    assert report["provenance"]["deviations"][0].startswith("protocol=official")
