"""VQDv1 end to end: the launcher runs ``vqdv1_sample`` with the random baseline and the tiny llava_hf."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.reporting.schema import read_report
from lmms_eval_tasks.tasks.vqdv1 import BENCHMARK
from lmms_eval_tasks.tasks.vqdv1.prompts import TEMPLATES
from lmms_eval_tasks.tasks.vqdv1.scoring import BUCKETS, score
from tests.helpers import offline_environment, results_json, run_launcher, samples_jsonl

pytestmark = pytest.mark.slow
TASK = "vqdv1_sample"


def _pack_records(output: Path) -> list[dict]:
    path = next(output.rglob(f"lmms_eval_tasks/*/{TASK}_samples.jsonl"))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _check_run(output: Path, **score_options: str) -> tuple[dict, list[dict]]:
    results = results_json(output)["results"][TASK]
    records = _pack_records(output)
    assert len(records) == 19
    assert {"question_id", "gtbox", "width", "height", "prediction"} <= set(records[0])
    rescored = score(records, **score_options)[0]
    for key in BENCHMARK.headline_metrics:
        value, expected = results[f"{key},none"], rescored[key]
        assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected), key
    report = read_report(next(output.rglob(f"lmms_eval_tasks/*/{TASK}_report.json")))
    if score_options.get("protocol") != "official":
        assert [row["boxes"] for row in report["details"]["buckets"]] == list(BUCKETS)
        assert [row["queries"] for row in report["details"]["buckets"]] == [6, 5, 3, 2, 3]
        plot = Path(report["details"]["precision_recall_plot"])
        assert plot.read_bytes()[:4] == b"\x89PNG"
    assert report["provenance"]["settings"]["score_options"] == score_options
    return results, records


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The random baseline's run (seed 0), shared by the tests that read it (read only)."""
    output = tmp_path_factory.mktemp("vqdv1_random") / "random"
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--tasks", TASK,
        "--output_path", str(output), "--log_samples",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return output


def test_random_baseline(random_run: Path) -> None:
    output = random_run
    _, records = _check_run(output)
    # A model without its own lmms_eval_specific_kwargs entry gets the API-model prompt (paper Table 11).
    first = samples_jsonl(output, TASK)[0]["input"]
    assert first == TEMPLATES["api"].replace("{question}", "Show the red circle in the picture.")
    # The baseline answers in the output syntax: every prediction parses (boxes or an explicit [[]]).
    assert all(record["prediction"].startswith("[[") for record in records)
    assert score(records)[0]["unparsed"] == 0


def test_random_baseline_official_protocol_and_grid_coordinates(tmp_path: Path) -> None:
    output = tmp_path / "official"
    environment = offline_environment(
        LMMS_EVAL_TASKS_VQDV1_PROTOCOL="official", LMMS_EVAL_TASKS_VQDV1_COORDS="grid1000"
    )
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=1", "--tasks", TASK,
        "--output_path", str(output), "--log_samples", environment=environment,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    _check_run(output, protocol="official", coords="grid1000")


def test_tiny_llava_and_compare_with_the_baseline(
    tmp_path: Path, tiny_llava_dir: Path, random_run: Path
) -> None:
    llava = tmp_path / "llava"
    completed = run_launcher(
        "--model", "llava_hf",
        "--model_args", f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
        "--tasks", TASK, "--output_path", str(llava), "--log_samples",
        "--gen_kwargs", "max_new_tokens=8",  # a random model: its 200 tokens would be noise too
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    _check_run(llava)
    # llava_hf gets LLaVA-1.5's prompt through the task's per-model kwargs.
    first = samples_jsonl(llava, TASK)[0]["input"]
    assert first == TEMPLATES["llava15"].replace("{question}", "Show the red circle in the picture.")
    baseline = random_run
    llava_samples = next(llava.rglob(f"lmms_eval_tasks/*/{TASK}_samples.jsonl"))
    baseline_samples = next(baseline.rglob(f"lmms_eval_tasks/*/{TASK}_samples.jsonl"))
    compared = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "compare", "vqdv1", str(llava_samples),
         str(baseline_samples)],
        capture_output=True, text=True, check=False, env=offline_environment(),
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    output = json.loads(compared.stdout)
    # "correct" = per-query F1 of 1, from each run's own records
    correct_a = sum(score == 1 for score in _query_f1(_pack_records(llava)))
    assert output["questions"] == 19
    assert output["accuracy_a"] == pytest.approx(100 * correct_a / 19)
    assert output["both_correct"] + output["b10"] == correct_a


def _query_f1(records: list[dict]) -> list[float]:
    from lmms_eval_tasks.tasks.vqdv1.scoring import score_queries

    return [score.f1 for score in score_queries(records)]


def test_vqdv1_task_reads_the_prepared_folder(tmp_path: Path) -> None:
    from lmms_eval_tasks.framework.preparing import preparers
    from lmms_eval_tasks.tasks.vqdv1.make_sample import rows

    # The sample's queries as a released annotation file plus a COCO-style image folder.
    images = tmp_path / "coco" / "val2014"
    images.mkdir(parents=True)
    entries = []
    for row in rows():
        (images / row["file_name"]).write_bytes(row["image"]["bytes"])
        entries.append({key: value for key, value in row.items() if key != "image"})
    annotations = tmp_path / "VQDv1_sampling.json"
    annotations.write_text(json.dumps(entries), encoding="utf-8")
    prepared = tmp_path / "prepared"
    preparers()["vqdv1"].prepare(annotations, tmp_path / "coco", prepared, progress=False)

    missing = run_launcher(
        "--model", "random_guess", "--tasks", "vqdv1", "--output_path", str(tmp_path / "none"),
        environment=offline_environment(LMMS_EVAL_TASKS_DATA_VQDV1="", LMMS_EVAL_TASKS_DATA=""),
    )  # fmt: skip
    assert missing.returncode != 0
    assert "lmms-eval-tasks prepare vqdv1" in missing.stdout + missing.stderr

    output = tmp_path / "out"
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--tasks", "vqdv1",
        "--output_path", str(output), "--log_samples",
        environment=offline_environment(LMMS_EVAL_TASKS_DATA_VQDV1=str(prepared)),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = results_json(output)["results"]["vqdv1"]
    path = next(output.rglob("lmms_eval_tasks/*/vqdv1_samples.jsonl"))
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert sorted(record["question_id"] for record in records) == list(range(19))
    assert results["micro_f1,none"] == pytest.approx(score(records)[0]["micro_f1"])
