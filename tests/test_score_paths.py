"""One scoring path: `score` and the hook runtime call the same ``score`` with the same options.

Crafted HallusionBench records, offline rule judge (no network): one figure, two questions.
q0: gt yes, prediction "Yes" -> correct; q1: gt no, prediction "Yes, it is." -> wrong.
aAcc = 1/2 = 50.0; fAcc = 0/1 = 0.0 (the figure has a wrong question); the rule judge matched every
answer itself, so llm_matched = 0 and judge_is_rule_based = 1.
"""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework.task_pipeline import score_and_report

FIELDS = {
    "category": "VD",
    "subcategory": "illusion",
    "visual_input": "1",
    "set_id": "0",
    "figure_id": "0",
    "filename": "a.png",
    "sample_note": "",
}
RECORDS = [
    {**FIELDS, "question_id": "0", "question": "Is the left line longer?", "gt_answer": "1",
     "gt_answer_details": "yes", "prediction": "Yes"},
    {**FIELDS, "question_id": "1", "question": "Is the right line longer?", "gt_answer": "0",
     "gt_answer_details": "no", "prediction": "Yes, it is."},
]  # fmt: skip


CONTEXTUAL_RECORDS = [
    {"image_url": f"https://example.org/{index}.png", "instruction": "What time is it?", "category": "time",
     "response": "3:40", "prediction": answer}
    for index, answer in enumerate(["3:40", "noon"])
]  # fmt: skip


def _write(tmp_path: Path, records: list[dict]) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _score(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["score", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_score_gives_the_harness_only_metrics_of_hallusionbench(tmp_path, capsys) -> None:
    metrics = _score(capsys, "hallusionbench", str(_write(tmp_path, RECORDS)), "-o", 'judge="rule"')
    assert metrics["aAcc"] == 50.0 and metrics["fAcc"] == 0.0
    assert metrics["judge_is_rule_based"] == 1
    assert metrics["llm_matched"] == 0


def test_score_details_prints_metrics_details_and_options(tmp_path, capsys) -> None:
    path = str(_write(tmp_path, RECORDS))
    plain = _score(capsys, "hallusionbench", path, "-o", 'judge="rule"')
    full = _score(capsys, "hallusionbench", path, "-o", 'judge="rule"', "--details")
    assert set(full) == {"metrics", "details", "options"}
    assert full["metrics"] == plain
    assert full["options"] == {"judge": "rule"}
    assert full["details"]["judge"]["kind"] == "rule"
    assert full["details"]["deviations"] == ["rule-based yes/no judge instead of the paper's GPT-4 judge"]
    assert full["details"]["unjudged"] == []


def test_the_hook_runtime_records_its_options_and_score_options_from_reuses_them(tmp_path, capsys) -> None:
    """The offline task's aggregation writes a report holding its options (official variant, rule judge,
    official no-verdict rule);
    `score --options-from` that report re-scores the task's own records to the same metrics."""
    from lmms_eval_tasks.tasks.hallusionbench import hooks

    task = "hallusionbench_offline_sample"
    items = [hooks.process_results({**rec, "pack_task": task}, [rec["prediction"]]) for rec in RECORDS]
    args = Namespace(model="crafted", model_args="", limit=None, seed=None, output_path=str(tmp_path / "out"))
    assert hooks.HOOKS.aggregator("aAcc")([item["aAcc"] for item in items], args) == 50.0
    [report_path] = sorted((tmp_path / "out").rglob(f"{task}_report.json"))
    report = json.loads(report_path.read_text(encoding="utf-8"))
    options = {"variant": "official", "judge": "rule", "no_verdict": "official"}
    assert report["provenance"]["settings"]["score_options"] == options
    assert report["metrics"]["judge_is_rule_based"] == 1 and report["metrics"]["llm_matched"] == 0
    records = str(_write(tmp_path, RECORDS))
    rescored = _score(capsys, "hallusionbench", records, "--options-from", str(report_path))
    assert rescored.pop("uncertainty") == report["details"]["uncertainty"]  # score shows it with the metrics
    assert rescored == report["metrics"]
    # -o wins over the report's options, and reaches the scorer (which echoes the variant it used).
    other = _score(
        capsys, "hallusionbench", records, "--options-from", str(report_path),
        "-o", 'variant="vlmevalkit"', "--details",
    )  # fmt: skip
    assert other["options"] == {**options, "variant": "vlmevalkit"}
    assert other["metrics"]["variant"] == "vlmevalkit"


def test_options_from_a_file_that_is_no_report_fails_in_one_line(tmp_path, capsys) -> None:
    records = str(_write(tmp_path, RECORDS))
    not_a_report = tmp_path / "results.json"
    not_a_report.write_text('{"results": {}}', encoding="utf-8")
    assert main(["score", "hallusionbench", records, "--options-from", str(not_a_report)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "not a pack report" in error[0] and "_report.json" in error[0]
    old = tmp_path / "old_report.json"
    old.write_text(json.dumps({"benchmark": "hallusionbench", "provenance": {"settings": {}}}), "utf-8")
    assert main(["score", "hallusionbench", records, "--options-from", str(old)]) == 2
    assert "score_options is missing" in capsys.readouterr().err
    other = tmp_path / "dare_report.json"
    other.write_text(json.dumps({"benchmark": "dare", "provenance": {"settings": {}}}), encoding="utf-8")
    assert main(["score", "hallusionbench", records, "--options-from", str(other)]) == 2
    assert "a 'dare' report, not 'hallusionbench'" in capsys.readouterr().err


@pytest.mark.parametrize("benchmark", ["dare", "vrb"])
def test_a_hook_level_scorer_report_records_its_options_for_options_from(tmp_path, capsys, benchmark) -> None:
    """DARE and VRB still score through their ``score``; their reports must carry
    ``provenance.settings.score_options`` too (DARE's: none, ``{}``), so `score --options-from` re-scores
    their records to the report's numbers instead of refusing the report as one "written before the pack
    recorded its options"."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    bench = get_benchmark(benchmark)
    hooks = get_benchmark(benchmark).loaded.hooks
    task = {"dare": "dare_sample_single_gen_p1", "vrb": "vrb_sample"}[benchmark]
    records = [{**record, "task": task} for record in bench.record_schema.example]
    args = Namespace(model="crafted", model_args="", limit=None, seed=None, output_path=str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    score_and_report(hooks, records, task, args, folder=tmp_path / "out")
    report = json.loads((tmp_path / "out" / f"{task}_report.json").read_text(encoding="utf-8"))
    assert isinstance(report["provenance"]["settings"]["score_options"], dict)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    report_path = str(tmp_path / "out" / f"{task}_report.json")
    rescored = _score(capsys, benchmark, str(path), "--options-from", report_path)
    rescored.pop("uncertainty", None)
    shared = {key: value for key, value in report["metrics"].items() if key in rescored}
    assert shared and all(rescored[key] == value for key, value in shared.items())


# Run-only details (written by each benchmark's hooks.report_details, or added by the hook runtime), left
# out of the comparison: VRB's corruption profile/seed the run applied, and the runtime's own keys.
RUN_ONLY_DETAILS = {"corruption", "pack_seeds", "uncertainty", "records", "submission_files"}


@pytest.mark.parametrize(
    ("benchmark", "task"),
    [("dare", "dare_sample_single_gen_p1"), ("vrb", "vrb_sample_clean"), ("contextual", "contextual_sample")],
)
def test_score_details_on_a_runs_samples_file_gives_the_reports_metrics_and_details(
    tmp_path, capsys, monkeypatch, benchmark, task
) -> None:
    """The hook runtime scores a task's records and writes its report and samples file; `score --details
    --options-from` that report on that samples file gives the same metrics and the same details (one
    scoring path: the same ``score`` with the same options). ConTextual is judged by the offline rule
    judge (no key in the isolated judge environment)."""
    from fake_openai import isolate_judge_env

    from lmms_eval_tasks.framework.registry import get_benchmark

    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge_cache.sqlite"))
    bench = get_benchmark(benchmark)
    hooks = get_benchmark(benchmark).loaded.hooks
    records = [{**record, "task": task} for record in bench.record_schema.example]
    args = Namespace(model="crafted", model_args="", limit=None, seed=None, output_path=str(tmp_path / "out"))
    (tmp_path / "out").mkdir()
    score_and_report(hooks, records, task, args, folder=tmp_path / "out")
    report_path = tmp_path / "out" / f"{task}_report.json"
    report = json.loads(report_path.read_text(encoding="utf-8"))
    samples = tmp_path / "out" / f"{task}_samples.jsonl"
    assert report["provenance"]["settings"]["score_options"] == bench.task_options(task)
    full = _score(capsys, benchmark, str(samples), "--options-from", str(report_path), "--details")
    assert full["metrics"].pop("uncertainty") == report["details"]["uncertainty"]
    details = dict(full["details"])
    for key in ("deviations", "warnings"):  # the runtime moves these into the report's provenance
        assert set(details.pop(key, [])) <= set(report["provenance"].get(key) or [])
    reported = {key: value for key, value in report["details"].items() if key not in RUN_ONLY_DETAILS}
    if benchmark == "contextual":
        # the samples file carries the run's verdicts: `score` reuses them (no second judging), so only
        # who judged differs: "supplied" (2 records) instead of the run's rule judge.
        assert (full["metrics"].pop("judge"), report["metrics"].pop("judge")) == ("supplied", "rule")
        assert full["metrics"].pop("judge_model") is None
        assert report["metrics"].pop("judge_model") == "rule-based"
        supplied = (full["metrics"].pop("supplied_verdicts"), report["metrics"].pop("supplied_verdicts"))
        assert supplied == (2, 0)
        for key in ("judge", "judging"):
            details.pop(key, None), reported.pop(key, None)  # the report keeps the judge in provenance
    assert full["metrics"] == report["metrics"]
    assert details == reported
    assert details  # each of the three has scorer details (tables, per scenario and per repeat)


JUDGE_VARIABLES = (
    "OPENAI_API_KEY", "OPENAI_API_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE", "AZURE_ENDPOINT",
    "AZURE_OPENAI_ENDPOINT", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "API_TYPE", "LMMS_EVAL_TASKS_JUDGE",
    "LMMS_EVAL_TASKS_JUDGE_BASE_URL", "LMMS_EVAL_TASKS_JUDGE_API_KEY",
)  # fmt: skip


@pytest.mark.parametrize("task", ["hallusionbench", "hallusionbench_vlmevalkit"])
def test_score_of_judged_records_without_a_judge_refuses_in_one_line(
    tmp_path, capsys, monkeypatch, task
) -> None:
    """A run's records of a judged task, re-scored with no judge configured: exit 2 before any judging, one
    line naming the task, the key variables and the rule-judge switch (was: scored by the rule judge)."""
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    records = str(_write(tmp_path, [{**record, "task": task} for record in RECORDS]))
    assert main(["score", "hallusionbench", records]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        f"lmms-eval-tasks score: records of {task} are scored by an LLM judge and none is configured: set "
        "OPENAI_API_KEY (OpenAI), OPENAI_API_URL (a local OpenAI-compatible server) or AZURE_ENDPOINT + "
        "AZURE_API_KEY; or set LMMS_EVAL_TASKS_JUDGE=rule to re-score them with the offline rule judge (an "
        "approximation, not comparable with GPT-judged numbers; the output names the rule judge)"
    )
    # asked for by name, the rule judge scores them, and the output says it did
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    metrics = _score(capsys, "hallusionbench", records)
    assert metrics["judge_is_rule_based"] == 1 and metrics["aAcc"] == 50.0
    monkeypatch.delenv("LMMS_EVAL_TASKS_JUDGE")
    assert _score(capsys, "hallusionbench", records, "-o", 'judge="rule"')["judge_is_rule_based"] == 1


@pytest.mark.parametrize("benchmark", ["hallusionbench", "contextual"])
def test_score_of_records_without_a_task_is_judged_as_the_benchmark(
    tmp_path, capsys, monkeypatch, benchmark
) -> None:
    """Records with no ``task`` field (a predictions file of the user's own) are scored by the benchmark's
    judged protocol: with no judge configured they used to be scored by the rule judge (a WARNING on stderr);
    now they are refused in the same line as a judged task's records, and run with the rule judge by name.
    (With every verdict supplied no judge is needed: test_cli_scores_a_jsonl_file, test_score_command.)"""
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    rows = RECORDS if benchmark == "hallusionbench" else CONTEXTUAL_RECORDS
    records = str(_write(tmp_path, [{k: v for k, v in row.items() if k != "task"} for row in rows]))
    assert main(["score", benchmark, records]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    refusal = (
        f"lmms-eval-tasks score: records of {benchmark} are scored by an LLM judge and none is configured"
    )
    assert captured.err.strip().splitlines()[-1].startswith(refusal), captured.err
    assert _score(capsys, benchmark, records, "-o", 'judge="rule"')["judge"] == "rule"


def test_compare_of_judged_records_without_a_judge_refuses_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    """`compare` re-scores both runs: judged records with no judge configured used to be compared on the rule
    judge's verdicts (a WARNING on stderr; the JSON names no judge); now refused like `score` refuses."""
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    records = str(_write(tmp_path, [{**record, "task": "hallusionbench"} for record in RECORDS]))
    assert main(["compare", "hallusionbench", records, records]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    refusal = "lmms-eval-tasks compare: records of hallusionbench are scored by an LLM judge"
    assert captured.err.strip().splitlines()[-1].startswith(f"{refusal} and none is configured"), captured.err
    assert main(["compare", "hallusionbench", records, records, "-o", 'judge="rule"']) == 0
    assert json.loads(capsys.readouterr().out)["b01"] == 0


def test_score_of_rule_judged_tasks_needs_no_judge(tmp_path, capsys, monkeypatch) -> None:
    """hallusionbench_offline fixes the rule judge, the *_sample tasks are pipeline checks: both re-score as
    they ran, without a judge."""
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for task in ("hallusionbench_offline", "hallusionbench_sample"):
        records = str(_write(tmp_path, [{**record, "task": task} for record in RECORDS]))
        assert _score(capsys, "hallusionbench", records)["judge_is_rule_based"] == 1


def test_a_task_with_no_records_in_the_folder_names_the_tasks_that_have_some(tmp_path, capsys) -> None:
    """`score tdiuc OUT --task tdiuc` on a folder holding tdiuc_sample's records said only "no samples file
    for task 'tdiuc' under OUT"; now it names the tasks whose records are there."""
    run = tmp_path / "out" / "lmms_eval_tasks" / "20260101_000000"
    run.mkdir(parents=True)
    (run / "tdiuc_sample_samples.jsonl").write_text("{}\n", encoding="utf-8")
    assert main(["score", "tdiuc", str(tmp_path / "out"), "--task", "tdiuc"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("lmms-eval-tasks score: no samples file for task 'tdiuc' under "), last
    assert last.endswith("(tasks with records under it: tdiuc_sample)"), last


def test_a_report_file_given_for_records_names_the_records_file(tmp_path, capsys) -> None:
    """`score tdiuc RUN/tdiuc_sample_report.json` said "record at line 1: field '<json>': not valid JSON";
    the records are the <task>_samples.jsonl next to it."""
    report = tmp_path / "tdiuc_sample_report.json"
    report.write_text('{\n  "schema": 1\n}\n', encoding="utf-8")
    assert main(["score", "tdiuc", str(report)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == (
        f"lmms-eval-tasks score: {report} is the pack's report of a run; its records are "
        f"{tmp_path / 'tdiuc_sample_samples.jsonl'}"
    ), last
