"""End to end: the launcher runs the HallusionBench sample tasks with the random baseline and the tiny LLaVA,
judged by a local fake OpenAI server (hallusionbench_sample, the VLMEvalKit variant) and by the rule judge
(hallusionbench_offline_sample), in one run per model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from helpers import offline_environment, results_json, run_launcher, samples_jsonl

from lmms_eval_tasks.judges import load_prompt, rules
from lmms_eval_tasks.reporting.schema import read_report
from lmms_eval_tasks.tasks.hallusionbench import hooks, scoring

pytestmark = pytest.mark.slow

TASKS = ("hallusionbench_sample", "hallusionbench_offline_sample", "hallusionbench_vlmevalkit_sample")
CORRECTNESS_PREFIX = load_prompt("hallusionbench_correctness_judge").split("{question}")[0]
CONSISTENCY_PREFIX = load_prompt("hallusionbench_consistency_same_judge").split("{response_current}")[0]


def fake_judge(prompt: str) -> str:
    """A deterministic stand-in for GPT-4: a "yes" answer is correct, equal yes/no answers are the same."""
    if prompt.startswith(CORRECTNESS_PREFIX):
        prediction = prompt.split("\nPrediction answer:", 1)[1].rsplit("\nOutput:", 1)[0]
        return "correct" if rules.extract_yes_no(prediction) == "yes" else "incorrect"
    if prompt.startswith(CONSISTENCY_PREFIX):
        first, second = prompt.split("response1:", 1)[1].rsplit("\nOutput:", 1)[0].split("\nresponse2: ", 1)
        return "same" if rules.extract_yes_no(first) == rules.extract_yes_no(second) else "different"
    return "Unknown"  # VLMEvalKit's yes/no matching prompt


def run_sample_tasks(tmp_path: Path, model_arguments: list[str]) -> tuple[dict, Path, FakeOpenAIServer]:
    output = tmp_path / "out"
    with FakeOpenAIServer(fake_judge) as server:
        environment = offline_environment(
            OPENAI_API_URL=server.base_url,
            OPENAI_API_KEY="test-key",
            LMMS_EVAL_TASKS_JUDGE="auto",
            LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "judge_cache.sqlite"),
        )
        completed = run_launcher(
            "--tasks",
            ",".join(TASKS),
            *model_arguments,
            "--output_path",
            str(output),
            "--log_samples",
            environment=environment,
        )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return results_json(output), output, server


def task_report(output: Path, task: str) -> dict:
    """The pack's report of ``task`` under the run's output folder."""
    return read_report(next(output.rglob(f"lmms_eval_tasks/*/{task}_report.json")))


def check_results(results: dict, output: Path, server: FakeOpenAIServer) -> None:
    for task in TASKS:
        metrics = results["results"][task]
        variant = hooks.TASKS[task].variant
        for key in hooks.RESULT_KEYS[variant]:
            value = metrics[f"{key},none"]
            assert isinstance(value, int | float), (task, key, value)
        for key in ("aAcc", "fAcc", "qAcc", "overall"):
            assert 0.0 <= metrics[f"{key},none"] <= 100.0, (task, key)
        assert metrics["unjudged_verdicts,none"] == 0
    official = results["results"]["hallusionbench_sample"]
    for key in hooks.OFFICIAL_RESULT_KEYS:  # every metric listed in the results is defined on this sample
        assert not math.isnan(official[f"{key},none"]), key
    # every other metric is in the pack's report (strict JSON: null when undefined)
    official_report = task_report(output, "hallusionbench_sample")["metrics"]
    for key in scoring.HEADLINE_METRICS:  # every official metric is defined on this sample
        assert official_report[key] is not None, key
        if key in hooks.OFFICIAL_RESULT_KEYS:
            assert official_report[key] == pytest.approx(official[f"{key},none"]), key
    assert official_report["judge_is_rule_based"] == 0
    assert task_report(output, "hallusionbench_offline_sample")["metrics"]["judge_is_rule_based"] == 1
    # the fake endpoint judged, with the byte-exact official prompts
    prompts = server.prompts()
    assert any(prompt.startswith(CORRECTNESS_PREFIX) for prompt in prompts)
    assert any(prompt.startswith(CONSISTENCY_PREFIX) for prompt in prompts)
    # per-sample logs: prediction, each repeat's verdict, the consistency flag, the diagnosis
    host_rows = samples_jsonl(output, "hallusionbench_sample")
    assert all(row["fAcc"] == row["unjudged_verdicts"] == "see 'aAcc'" for row in host_rows)  # logged once
    logged = [row["aAcc"] for row in host_rows]
    assert len(logged) == 29
    assert all(len(row["judge_verdicts"]) == 3 and len(row["diagnosis"]) == 3 for row in logged)
    assert all(row["consistency_same"] is None or len(row["consistency_same"]) == 3 for row in logged)
    assert all(row["judge"] != "rule-based" for row in logged)
    # the pack's report and leaderboard file; re-scoring the leaderboard rows reproduces the offline task
    folder = next(output.rglob("lmms_eval_tasks/*/hallusionbench_sample_report.json")).parent
    report = read_report(folder / "hallusionbench_sample_report.json")
    assert report["provenance"]["judge"]["repeats"] == 3 and report["provenance"]["judge"]["kind"] == "openai"
    rows = json.loads((folder / "hallusionbench_offline_sample" / "HallusionBench_result.json").read_text())
    assert len(rows) == 29 and all("model_prediction" in row for row in rows)
    rescored = scoring.score([{**row, "prediction": row["model_prediction"]} for row in rows], judge="rule")[
        0
    ]
    offline = results["results"]["hallusionbench_offline_sample"]
    for key in ("aAcc", "fAcc", "qAcc", "overall"):
        assert rescored[key] == pytest.approx(offline[f"{key},none"]), key


def test_random_baseline_on_the_sample_tasks(tmp_path):
    results, output, server = run_sample_tasks(
        tmp_path, ["--model", "random_guess", "--model_args", "seed=3"]
    )
    check_results(results, output, server)
    rows = json.loads(
        next(output.rglob("lmms_eval_tasks/*/hallusionbench_sample/HallusionBench_result.json")).read_text()
    )
    assert {row["model_prediction"] for row in rows} <= {"Yes", "No"}
    assert task_report(output, "hallusionbench_sample")["metrics"]["empty_predictions"] == 0


def test_tiny_llava_on_the_sample_tasks(tmp_path, tiny_llava_dir):
    results, output, server = run_sample_tasks(
        tmp_path,
        [
            "--model",
            "llava_hf",
            "--model_args",
            f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
            "--gen_kwargs",
            "max_new_tokens=6",
        ],
    )
    check_results(results, output, server)
    # a random model rarely says yes or no: the VLMEvalKit variant sends those answers to the LLM matcher
    assert results["results"]["hallusionbench_vlmevalkit_sample"]["llm_matched,none"] > 0
