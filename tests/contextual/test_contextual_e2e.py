"""End to end: the launcher runs the ConTextual sample tasks with the tiny LLaVA, judged by a local fake
OpenAI server with injected faults (every verdict must still be the judge's verdict for that item) and by
the offline rule judge; the submission task writes a valid leaderboard file."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, fail_first_attempts, stable_fraction
from helpers import offline_environment, results_json, run_launcher

from lmms_eval_tasks.reporting.schema import read_report
from lmms_eval_tasks.tasks.contextual import scoring

pytestmark = pytest.mark.slow


def fake_judge(prompt: str) -> str:
    """A deterministic stand-in for GPT-4 whose verdict differs between items (so a swap would show)."""
    verdict = "Yes" if stable_fraction("verdict" + prompt) < 0.5 else "No"
    return f"The predicted response is compared with the ground truth (Yes or No?).\nJudgement: {verdict}"


def run(tmp_path: Path, tasks: str, tiny_llava_dir: Path, **environment: str) -> Path:
    output = tmp_path / "out"
    completed = run_launcher(
        "--tasks", tasks,
        "--model", "llava_hf",
        "--model_args", f"pretrained={tiny_llava_dir},device=cpu,device_map=cpu",
        "--gen_kwargs", "max_new_tokens=8",
        "--output_path", str(output),
        "--log_samples",
        environment=offline_environment(**environment),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-4000:]
    return output


def pack_file(output: Path, name: str) -> Path:
    found = sorted(output.rglob(f"lmms_eval_tasks/*/{name}"))
    assert len(found) == 1, found
    return found[0]


def pack_samples(output: Path, task: str) -> list[dict]:
    path = pack_file(output, f"{task}_samples.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_sample_judged_through_the_fake_server_with_faults_and_exported(tmp_path, tiny_llava_dir):
    with FakeOpenAIServer(fake_judge, faults=fail_first_attempts(0.6, sleep=1.5)) as server:
        output = run(
            tmp_path,
            "contextual_sample,contextual_sample_submission",
            tiny_llava_dir,
            OPENAI_API_URL=server.base_url,
            OPENAI_API_KEY="test-key",
            LMMS_EVAL_TASKS_JUDGE="auto",
            LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "judge_cache.sqlite"),
            LMMS_EVAL_TASKS_JUDGE_BACKOFF_BASE="0.01",
            LMMS_EVAL_TASKS_JUDGE_BACKOFF_MAX="0.05",
            LMMS_EVAL_TASKS_JUDGE_TIMEOUT="1",
        )
        faulted = [call for call in server.calls if call.fault]
    assert faulted, "the fault plan injected nothing"
    results = results_json(output)["results"]
    sample = results["contextual_sample"]
    records = pack_samples(output, "contextual_sample")
    assert len(records) == 10
    # every verdict is the one the judge gives for that item's own prompt (no swap, no fault read as No)
    expected = [
        scoring.parse_judge_reply(fake_judge(scoring.judge_prompt(scoring.parse_item(record, i))))
        for i, record in enumerate(records)
    ]
    assert 0 < sum(expected) < 10  # both verdicts occur, so a swapped verdict would show
    assert [record["judge_verdicts"] for record in records] == [["Yes" if v else "No"] for v in expected]
    assert sample["unjudged,none"] == 0
    assert sample["acceptance_rate,none"] == pytest.approx(100 * sum(expected) / 10)
    # the pack's samples file re-scores to the run's numbers from its saved replies, with no judge
    rescored = scoring.score(records, judge="openai")[0]
    assert rescored["supplied_verdicts"] == 10
    for key in scoring.HEADLINE_METRICS:
        assert rescored[key] == pytest.approx(sample[f"{key},none"]), key
    report = read_report(pack_file(output, "contextual_sample_report.json"))
    assert report["provenance"]["judge"]["kind"] == "openai"
    # the submission task: one row per instruction, the model's responses, the authors' columns
    submission = results["contextual_sample_submission"]
    assert submission["submission_rows,none"] == 10
    with open(pack_file(output, "contextual_sample_submission_predictions.csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(scoring.SUBMISSION_FIELDS)
    by_url = {record["image_url"]: record for record in pack_samples(output, "contextual_sample_submission")}
    assert {row["image_url"] for row in rows} == set(by_url) and len(rows) == 10
    for row in rows:
        assert row["response"] == by_url[row["image_url"]]["prediction"]
        assert row["instruction"] == by_url[row["image_url"]]["instruction"]
    predictions = json.loads(pack_file(output, "contextual_sample_submission_predictions.json").read_text())
    assert list(predictions) == [str(tiny_llava_dir)]


def test_sample_judged_by_the_rule_judge(tmp_path, tiny_llava_dir):
    output = run(tmp_path, "contextual_sample", tiny_llava_dir, LMMS_EVAL_TASKS_JUDGE="rule")
    sample = results_json(output)["results"]["contextual_sample"]
    records = pack_samples(output, "contextual_sample")
    expected = [scoring.rule_reply(record["prediction"], record["response"]) for record in records]
    assert [record["judge_replies"] for record in records] == [[reply] for reply in expected]
    assert sample["unjudged,none"] == 0  # every sample reference is short enough for the rule judge
    accepted = sum(reply == "Judgement: Yes" for reply in expected)
    assert sample["acceptance_rate,none"] == pytest.approx(10 * accepted)
    report = read_report(pack_file(output, "contextual_sample_report.json"))
    assert report["provenance"]["judge"]["kind"] == "rule"
    assert any("RULE judge" in warning for warning in report["warnings"])
