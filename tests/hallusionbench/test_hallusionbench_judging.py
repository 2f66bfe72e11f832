"""HallusionBench on the judging pipeline: judging that fails entirely (score_records, `score`, the task's
aggregation), and the report counts of the VLMEvalKit variant and the rule judge's consistency reach."""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, Fault, isolate_judge_env

from lmms_eval_tasks import cli
from lmms_eval_tasks.framework import hook_factory, saved_records
from lmms_eval_tasks.framework.task_pipeline import score_and_report
from lmms_eval_tasks.judges import JudgingFailed
from lmms_eval_tasks.tasks.hallusionbench import hooks, task_docs
from lmms_eval_tasks.tasks.hallusionbench import scoring as hb
from tests.hallusionbench.test_hallusionbench_metrics import crafted_records, fill_same, record

KEY = "sk-hallusion-" + "z" * 24


@pytest.fixture
def failing_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """An endpoint whose every call fails with HTTP 500 (no retries, so the tests are quick)."""
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "0")
    with FakeOpenAIServer(faults=lambda call: Fault("server_error")) as server:
        monkeypatch.setenv("OPENAI_API_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield server


def unjudged_records() -> list[dict]:
    """The crafted 10-question set without supplied verdicts: everything goes to the judge."""
    rows = crafted_records()
    for row in rows:
        row.pop("judge_verdict", None)
        row.pop("judge_same", None)
    return rows


def test_every_verdict_unjudged_raises_instead_of_null_metrics(failing_endpoint):
    with pytest.raises(JudgingFailed) as caught:
        hb.score(unjudged_records())[0]
    message = str(caught.value)
    assert message.startswith("HallusionBench correctness: judging failed entirely: none of 30 judge replies")
    assert "HTTP 500" in message and KEY not in message
    # 10 questions x 3 repeats, one attempt each (identical prompts share a call); no consistency judging
    assert failing_endpoint.call_count() <= 30
    assert not any("Compare the two responses" in prompt for prompt in failing_endpoint.prompts())


def test_score_command_exits_3_with_the_one_line_reason(failing_endpoint, tmp_path, capsys):
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in unjudged_records()), encoding="utf-8")
    assert cli.main(["score", "hallusionbench", str(path), "-o", "repeats=1"]) == 3
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress bar and warnings
    assert error.startswith("lmms-eval-tasks score: HallusionBench correctness: judging failed entirely")
    assert "HTTP 500" in error and KEY not in error and "Traceback" not in error


def test_task_aggregation_fails_naming_the_task(failing_endpoint, tmp_path):
    rows = unjudged_records()
    for row in rows:
        row["task"] = "hallusionbench_sample"
    keys = hooks.RESULT_KEYS["official"]
    items = [hook_factory.record_under_keys(row, keys)[keys[0]] for row in rows]
    with pytest.raises(JudgingFailed, match=r"^hallusionbench_sample: HallusionBench correctness: judging"):
        task_docs.aggregate_aAcc(items, args=Namespace(output_path=None))  # nowhere to keep records: raise


def test_task_aggregation_that_fails_with_an_output_path_keeps_the_records(failing_endpoint, tmp_path):
    import math

    rows = unjudged_records()
    for row in rows:
        row["task"] = "hallusionbench_sample"
    keys = hooks.RESULT_KEYS["official"]
    items = [hook_factory.record_under_keys(row, keys)[keys[0]] for row in rows]
    saved_records.SAVED_FOR_SCORING.clear()
    args = Namespace(output_path=str(tmp_path), model="m", model_args="seed=0", limit=None, seed=None)
    # the host goes on (NaN for this task); the records are saved, the launcher fails the run naming them
    assert math.isnan(task_docs.aggregate_aAcc(items, args=args))
    calls = failing_endpoint.call_count()
    assert math.isnan(task_docs.aggregate_fAcc(items, args=args))
    assert failing_endpoint.call_count() == calls  # the failure is computed once: no second judging
    (saved,) = saved_records.SAVED_FOR_SCORING
    assert saved.task == "hallusionbench_sample" and saved.benchmark == "hallusionbench"
    assert saved.error.startswith("JudgingFailed: hallusionbench_sample: HallusionBench correctness")
    assert len(saved.path.read_text(encoding="utf-8").splitlines()) == len(rows)
    assert saved_records.pending_for(saved.path)["task"] == "hallusionbench_sample"
    assert not list(saved.path.parent.glob("*_report.json"))
    saved_records.SAVED_FOR_SCORING.clear()


def test_partly_failed_judging_scores_and_warns_above_the_threshold(monkeypatch, tmp_path, warnings_logged):
    """One of ten questions unjudged: 10 % of the items, above the default 5 % -> a warning, not an error."""
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "0")
    rows = unjudged_records()
    rows[1]["prediction"] = "FAIL ME"

    def faults(call):
        return Fault("bad_request") if "FAIL ME" in call.prompt else None

    with FakeOpenAIServer(lambda prompt: "correct", faults=faults) as server:
        monkeypatch.setenv("OPENAI_API_URL", server.base_url)
        result = hb.score(rows, repeats=1)[0]
    assert result["unjudged_verdicts"] == 1 and result["aAcc"] == pytest.approx(100.0)
    assert any("1 of 10 items (10.0 %)" in message and "threshold" in message for message in warnings_logged)


def test_vlmevalkit_variant_whose_matcher_fails_for_every_question_raises(failing_endpoint):
    rows = [row for row in unjudged_records() if row["visual_input"] != "0"]
    for row in rows:
        row["prediction"] = "Hard to say."  # no yes/no: every answer needs the LLM matcher
    with pytest.raises(JudgingFailed, match="yes/no matching: judging failed entirely.*HTTP 500"):
        hb.score(rows, variant="vlmevalkit")[0]


def test_vlmevalkit_counts_only_what_it_scores(warnings_logged):
    """Empty answers are counted over the scored image questions; no diagnosis counts; supplied verdicts
    are ignored with a warning."""
    rows = crafted_records()  # carries judge_verdict (and judge_same on two rows)
    no_image = [row for row in rows if row["visual_input"] == "0"]
    assert len(no_image) == 2
    for row in no_image:
        row["prediction"] = ""  # dropped by the variant: must not be counted as its empty answers
    rows[1]["prediction"] = ""  # an image question: counted
    result = hb.score(rows, variant="vlmevalkit", judge="rule")[0]
    assert result["dropped_no_image_questions"] == 2
    assert result["empty_predictions"] == 1
    assert any("1 of 8 model answers are empty" in message for message in warnings_logged)
    # VS figures 1 and 2 lost their no-image pair reference, but this variant diagnoses nothing
    for name in ("missing_pair_reference", "undiagnosed_verdicts", "unjudged_consistency_needed"):
        assert name not in result
    assert result["ignored_supplied_judge_fields"] == 8
    assert any("IGNORES them" in message for message in warnings_logged)
    # the official variant without the diagnosis reports no diagnosis counts either
    official = hb.score(fill_same(crafted_records()), diagnosis=False)[0]
    assert "missing_pair_reference" not in official and "undiagnosed_verdicts" not in official


def test_rule_consistency_can_be_undecided_when_verdicts_come_from_elsewhere():
    """The rule judge's undecided consistency never reaches the tree when it judged correctness too, but
    does with supplied (e.g. GPT) verdicts: then it is unjudged, counted and left out of LH/VI/Mixed."""
    rows = [
        record("VD", "illusion", "0", "0", "0", "1", "1", prediction="Yes."),
        record("VD", "illusion", "0", "1", "0", "2", "0", prediction="The left line looks longer."),
    ]
    # rule judge for everything: the answer without yes/no is "unclear" (verdict 2): VD o=1, j=2 -> VI,
    # the consistency flag is never read
    rule = hb.score([dict(row) for row in rows], judge="rule")[0]
    assert rule["unjudged_consistency_needed"] == 0 and rule["VI"] == pytest.approx(100.0)
    # a supplied "incorrect" for that answer: VD o=1, j=0 needs the flag, the rule judge cannot decide it
    for row, verdict in zip(rows, ("correct", "incorrect"), strict=True):
        row["judge_verdict"] = verdict
    supplied = hb.score(rows, judge="rule")[0]
    assert supplied["unjudged_consistency_needed"] == 1 and supplied["undiagnosed_verdicts"] == 1
    assert supplied["LH"] is None and supplied["VI"] is None  # the only wrong answer is undiagnosed
    assert supplied["aAcc"] == pytest.approx(50.0)  # correctness does not need the flag


@pytest.mark.slow
def test_launcher_exits_1_when_the_judge_endpoint_always_fails(tmp_path):
    """End to end: random baseline on the sample task, a fake endpoint failing every call: the aggregation
    fails, the launcher exits 1 and says why (redacted); the generations are kept (the host goes on and writes
    its files, the task's records are saved) and the last line is the command that scores them later."""
    from helpers import offline_environment, run_launcher

    output = tmp_path / "out"
    with FakeOpenAIServer(faults=lambda call: Fault("server_error")) as server:
        environment = offline_environment(
            OPENAI_API_URL=server.base_url,
            OPENAI_API_KEY=KEY,
            LMMS_EVAL_TASKS_JUDGE="auto",
            LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "judge_cache.sqlite"),
            LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES="0",
        )
        completed = run_launcher(
            "--tasks",
            "hallusionbench_sample",
            "--model",
            "random_guess",
            "--model_args",
            "seed=3",
            "--output_path",
            str(output),
            environment=environment,
        )
        calls = server.call_count()
    assert completed.returncode == 1, completed.stderr[-3000:]
    assert calls > 0
    lines = completed.stderr.splitlines()
    failure = [line for line in lines if line.startswith("lmms_eval: evaluation failed")]
    assert len(failure) == 1, completed.stderr[-3000:]
    reason = "JudgingFailed: hallusionbench_sample: HallusionBench correctness: judging failed entirely"
    assert reason in failure[0]
    assert "HTTP 500" in failure[0]
    assert KEY not in completed.stderr + completed.stdout
    (saved,) = output.rglob("hallusionbench_sample_samples.jsonl")
    assert lines[-1].endswith(f"lmms-eval-tasks score hallusionbench {saved}"), lines[-1]
    assert not list(output.rglob("*_report.json"))  # no report until the records are scored


def test_undiagnosed_and_unjudged_consistency_counts_are_report_warnings(monkeypatch, tmp_path):
    """The diagnosis counts change the LH/VI/Mixed shares, so a non-zero one is a report warning.

    Crafted: a VD pair, reference (figure 0) supplied "correct", figure 1 supplied "incorrect": VD with
    o=correct, j=incorrect needs the consistency flag, which the rule judge cannot decide for an answer
    without yes/no -> unjudged_consistency_needed = 1, and that question has no (LH, VI) tuple ->
    undiagnosed_verdicts = 1 (the reference is diagnosed: VD, correct -> (0, 0)); 1 repeat, 2 records."""
    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    rows = [
        record("VD", "illusion", "0", "0", "0", "1", "1", verdict="correct", prediction="Yes."),
        record("VD", "illusion", "0", "1", "0", "2", "0", verdict="incorrect", prediction="The left one."),
    ]
    for row in rows:
        row["task"] = "hallusionbench_sample"
    args = Namespace(output_path=str(tmp_path / "out"), model="m", model_args="", limit=None, seed=None)
    metrics, path = score_and_report(hooks.HOOKS, rows, "hallusionbench_sample", args)
    report = json.loads(Path(path).read_text(encoding="utf-8"))
    assert report["details"]["counts"]["undiagnosed_verdicts"] == 1
    assert report["details"]["counts"]["unjudged_consistency_needed"] == 1
    warnings = report["warnings"]
    assert (
        "1 judged verdicts without an LH/VI diagnosis (of 2 records, count 'undiagnosed_verdicts'): an input "
        "of the decision tree (pair reference verdict or consistency verdict) is unknown; left out of the "
        "LH/VI/Mixed shares"
    ) in warnings
    assert (
        "1 consistency verdicts the diagnosis needed but the judge did not give (of 2 records, count "
        "'unjudged_consistency_needed'): those answers are left out of the LH/VI/Mixed shares"
    ) in warnings
