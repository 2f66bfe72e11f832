"""The shared rule: every declared count that changes a headline number and is not zero is a report warning,
for every benchmark (from the benchmark's ``count_keys``), wherever the scorer put the count."""

from __future__ import annotations

import subprocess
import sys
from argparse import Namespace

import pytest
from fake_openai import FakeOpenAIServer, Fault, isolate_judge_env
from helpers import REPO_ROOT, offline_environment

from lmms_eval_tasks.framework.count_warnings import count_warnings
from lmms_eval_tasks.framework.registry import benchmarks
from lmms_eval_tasks.framework.task_pipeline import score_and_report
from lmms_eval_tasks.reporting.schema import read_report


def test_non_zero_counts_from_metrics_details_and_counts_become_warnings():
    metrics = {"unjudged": 2, "empty_predictions": 0, "accuracy": 0.5}
    details = {"counts": {"no_verdict": 1}, "unparsed": 3.0, "no_verdict": "official"}
    keys = ("unjudged", "empty_predictions", "no_verdict", "unparsed")
    warnings = count_warnings(keys, metrics, details, 10)
    # unjudged 2 (metrics), no_verdict 1 (details.counts: details.no_verdict is a mode, not a count),
    # unparsed 3 (details, a whole float); empty_predictions is zero: no warning
    assert warnings == [
        "2 unjudged verdicts (of 10 records, count 'unjudged'): the judge gave none; left out of the judged "
        "metrics",
        "1 judge replies without a verdict word (of 10 records, count 'no_verdict'): see the report's "
        "details for how they scored",
        "3 unparsed answers (of 10 records, count 'unparsed'): scored as wrong",
    ]
    assert count_warnings(("unjudged",), {"unjudged": 0}, {}, 10) == []
    assert count_warnings(("unjudged",), {"unjudged": True}, {}, 10) == []  # a flag, not a count
    # a scorer's own warning that states the count (and says more) is not repeated
    given = ["1 judge replies without a verdict word, scored as the official parse does"]
    assert [w.split(" (")[0] for w in count_warnings(keys, metrics, details, 10, given)] == [
        "2 unjudged verdicts",
        "3 unparsed answers",
    ]


def test_every_benchmark_declares_its_counts():
    declared = {name: benchmark.count_keys for name, benchmark in benchmarks().items()}
    assert "no_verdict" in declared["hallusionbench"] and "unjudged_verdicts" in declared["hallusionbench"]
    assert {"unjudged", "empty_predictions"} <= set(declared["contextual"])
    assert all("unparsed" in declared[name] for name in ("dare", "tallyqa", "vqdv1", "tdiuc", "dvqa"))


def test_contextual_report_lists_its_unjudged_items(monkeypatch, tmp_path):
    from lmms_eval_tasks.tasks.contextual.hooks import HOOKS

    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge.sqlite"))
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "auto")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    records = [
        {"image_url": f"https://example.org/{index}.png", "instruction": f"What does sign {index} say?",
         "category": "stvqa", "response": "OPEN", "prediction": "OPEN" if index % 2 else "CLOSED",
         "task": "contextual_sample"}
        for index in range(5)
    ]  # fmt: skip
    faults = lambda call: Fault("bad_request") if "sign 4" in call.prompt else None  # noqa: E731
    with FakeOpenAIServer(lambda prompt: "Judgement: Yes", faults=faults) as server:
        monkeypatch.setenv("OPENAI_API_URL", server.base_url)
        args = Namespace(output_path=str(tmp_path / "out"), model="m", model_args="", limit=None, seed=None)
        metrics, path = score_and_report(HOOKS, records, "contextual_sample", args)
    # 1 of 5 instructions (20 %) without a verdict: 4 judged, all "Yes" -> 100 % of the judged
    assert metrics["unjudged"] == 1 and metrics["acceptance_rate"] == 100.0
    report = read_report(path)
    expected = "1 unjudged verdicts (of 5 records, count 'unjudged'): the judge gave none; left out of the "
    assert expected + "judged metrics" in report["warnings"]


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly():
    """`lmms-eval-tasks tasks | head` and `lmms_eval --tasks list | head` (the host's loguru sink writes
    the list to stdout): no traceback, no loguru "Logging error"."""
    command = (
        f"{sys.executable} -m lmms_eval_tasks.cli tasks | head -c 10 >/dev/null; "
        f"{sys.executable} -m lmms_eval_tasks --version | head -c 3 >/dev/null; "
        f"{sys.executable} -m lmms_eval_tasks --tasks list | head -c 20 >/dev/null"
    )
    completed = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=offline_environment(), cwd=REPO_ROOT,
        timeout=300, check=False,
    )  # fmt: skip
    for sign in ("Traceback", "BrokenPipe", "Logging error"):
        assert sign not in completed.stderr, completed.stderr[-2000:]


def test_vrb_null_predictions_are_a_report_warning(tmp_path):
    """VRB scores a null prediction as wrong (docs/vrb.md) and counts it in ``missing_predictions``: a count
    that lowers the headline accuracy, so the report says it."""
    from lmms_eval_tasks.tasks.vrb.hooks import HOOKS

    def record(qid: int, prediction: str | None) -> dict:
        return {"question_id": qid, "answers": ["yes"] * 10, "multiple_choice_answer": "yes",
                "question_type": "is this", "answer_type": "yes/no", "corruption": "clean", "severity": 0,
                "prediction": prediction, "task": "vrb_sample"}  # fmt: skip

    args = Namespace(output_path=str(tmp_path / "out"), model="m", model_args="", limit=None, seed=None)
    metrics, path = score_and_report(HOOKS, [record(1, None), record(2, "yes")], "vrb_sample", args)
    # q1 null -> 0, q2 "yes" matches 10 of 10 answers -> 1: accuracy (0 + 1) / 2 = 0.5
    assert metrics["missing_predictions"] == 1 and metrics["accuracy"] == 0.5
    expected = "1 missing (null) predictions (of 2 records, count 'missing_predictions'): generation errors? "
    assert expected + "scored as wrong" in read_report(path)["warnings"]
