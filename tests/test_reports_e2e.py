"""Two models into one --output_path: each keeps its own host files, pack reports, samples and leaderboard
files, every pack file is strict JSON, and every report follows the schema and names its model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmms_eval_tasks import __version__
from lmms_eval_tasks.reporting import schema as reports
from tests.helpers import run_launcher

pytestmark = pytest.mark.slow

TASKS = ("hallusionbench_offline_sample", "dare_sample_single_gen_p1")


def _run(output: Path, model: str, model_args: str) -> None:
    completed = run_launcher(
        "--tasks",
        ",".join(TASKS),
        "--model",
        model,
        "--model_args",
        model_args,
        "--output_path",
        str(output),
        "--log_samples",
        "--seed",
        "3",
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]


def _host_predictions(folder: Path, date_id: str, task: str) -> list[str]:
    """The model's answers in the host's samples file, in doc order."""
    lines = (folder / f"{date_id}_samples_{task}.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    rows.sort(key=lambda row: row["doc_id"])
    answers = [row["filtered_resps"] for row in rows]
    return [answer[0] if isinstance(answer, list) else answer for answer in answers]


def test_two_models_in_one_output_path_keep_their_own_attributed_files(
    tmp_path: Path, tiny_llava_dir: Path
) -> None:
    output = tmp_path / "out"
    llava_args = f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu"
    _run(output, "random_guess", "seed=0")
    _run(output, "llava_hf", llava_args)

    # every file the pack wrote parses with a strict JSON parser (no NaN/Infinity tokens)
    pack_files = [path for path in output.rglob("*") if path.is_file() and "lmms_eval_tasks" in path.parts]
    assert pack_files
    for path in pack_files:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            for line in text.splitlines():
                reports.strict_loads(line)
        elif path.suffix == ".json":
            reports.strict_loads(text)

    # the host's per-model folders: random_guess has no checkpoint name (the output path itself)
    llava_folder = reports.model_folder_name(llava_args)
    assert llava_folder, "the host names the tiny LLaVA's folder after its path"
    expected = {"random_guess": ("", "seed=0"), "llava_hf": (llava_folder, llava_args)}
    report_paths = list(reports.iter_report_paths(output))
    assert len(report_paths) == 2 * len(TASKS)
    seen = set()
    for model, (folder_name, model_args) in expected.items():
        host_folder = output / folder_name
        (host_results,) = sorted(host_folder.glob("*_results.json"))
        date_id = host_results.name.removesuffix("_results.json")
        for task in TASKS:
            files = reports.latest_files(output, task, folder_name)
            report = reports.read_report(files["report"])  # strict parse + schema validation
            provenance = report["provenance"]
            assert report["task"] == task and report["benchmark"] == task.split("_")[0]
            assert (provenance["model"], provenance["model_args"]) == (model, model_args)
            assert provenance["pack_version"] == __version__ and provenance["host_version"] == "0.7.3"
            assert provenance["seeds"]["host"] == {"random": 3, "numpy": 3, "torch": 3, "fewshot": 3}
            assert "bundled generated sample data" in " ".join(provenance["deviations"])
            # the pack's run folder pairs with the host's results file of the same run
            assert provenance["run_id"] == date_id == files["report"].parent.name
            assert files["report"].parent.parent == host_folder / "lmms_eval_tasks"
            # the pack's samples hold this model's answers, the same as the host's samples file
            records = [reports.strict_loads(line) for line in files["samples"].read_text().splitlines()]
            host_answers = _host_predictions(host_folder, date_id, task)
            assert [record["prediction"] for record in records] == host_answers
            seen.add(files["report"])
        leaderboard = files["report"].parent / "hallusionbench_offline_sample" / "HallusionBench_result.json"
        rows = reports.strict_loads(leaderboard.read_text())
        hb_answers = _host_predictions(host_folder, date_id, "hallusionbench_offline_sample")
        assert [row["model_prediction"] for row in rows] == hb_answers
    assert seen == set(report_paths)  # both models' reports intact, none overwritten
