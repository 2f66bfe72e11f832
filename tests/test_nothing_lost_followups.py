"""Nothing lost, nothing silent, continued: a pending run completed by `score` with another judge says so
(stderr and the report's details.scored_later), and a saved-records failure names the step that failed
(scoring, or writing the report) in the launcher's lines and in `report`'s skip message."""

from __future__ import annotations

import errno
import json
from argparse import Namespace

import pytest
from fake_openai import FakeOpenAIServer, isolate_judge_env

from lmms_eval_tasks.framework import saved_records, task_pipeline
from lmms_eval_tasks.framework.task_pipeline import score_and_report
from lmms_eval_tasks.host.launcher import saved_records_lines
from lmms_eval_tasks.human_report import _pending_notes
from lmms_eval_tasks.judges import JudgingFailed
from lmms_eval_tasks.reporting import schema
from lmms_eval_tasks.tasks.contextual.hooks import HOOKS

KEY = "sk-followup-secret-123456"


def contextual_records() -> list[dict]:
    return [
        {"image_url": f"https://example.org/{index}.png", "instruction": f"What does sign {index} say?",
         "category": "stvqa", "response": "OPEN", "prediction": "OPEN" if index % 2 else "CLOSED",
         "task": "contextual_sample"}
        for index in range(4)
    ]  # fmt: skip


@pytest.fixture
def judge_env(monkeypatch, tmp_path):
    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge.sqlite"))
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "auto")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    saved_records.SAVED_FOR_SCORING.clear()
    yield monkeypatch
    saved_records.SAVED_FOR_SCORING.clear()


def args_for(tmp_path) -> Namespace:
    return Namespace(output_path=str(tmp_path / "out"), model="m", model_args="", limit=None, seed=None)


def refused_run(monkeypatch, tmp_path, model: str, repeats: str):
    """A contextual run whose judge refuses every call: records and marker saved, no report."""
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", model)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_REPEATS", repeats)
    with FakeOpenAIServer(lambda prompt: "Judgement: Yes", faults=lambda call: "unauthorized") as server:
        monkeypatch.setenv("OPENAI_API_URL", server.base_url)
        with pytest.raises(JudgingFailed):
            score_and_report(HOOKS, contextual_records(), "contextual_sample", args_for(tmp_path))
    (saved,) = saved_records.SAVED_FOR_SCORING
    return saved


def test_completing_with_another_judge_model_and_repeats_says_what_changed(judge_env, tmp_path, capsys):
    saved = refused_run(judge_env, tmp_path, "judge-a", "1")
    pending = saved_records.pending_for(saved.path)
    assert pending["judge"] == {"kind": "openai", "model": "judge-a", "repeats": 1}
    assert KEY not in saved.path.with_name("contextual_sample_pending.json").read_text(encoding="utf-8")
    judge_env.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", "judge-b")
    judge_env.setenv("LMMS_EVAL_TASKS_JUDGE_REPEATS", "2")
    capsys.readouterr()
    records = [json.loads(line) for line in saved.path.read_text(encoding="utf-8").splitlines()]
    with FakeOpenAIServer(lambda prompt: "Judgement: Yes") as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        metrics, path = task_pipeline.complete_pending(saved.path, records, pending)
    lines = [line for line in capsys.readouterr().err.splitlines() if "judge differs" in line]
    assert lines == [
        f"lmms-eval-tasks score: {saved.path}: the judge differs from the run's (model 'judge-a' in the run, "
        "'judge-b' now, repeats 1 in the run, 2 now): completing the run's report with this judge; its "
        "details.scored_later.judge_changed records it"
    ]
    report = schema.read_report(path)
    assert report["details"]["scored_later"]["judge_changed"] == {
        "model": {"run": "judge-a", "now": "judge-b"},
        "repeats": {"run": 1, "now": 2},
    }
    assert metrics["acceptance_rate"] == 100.0  # every reply "Yes": 4 of 4 accepted
    assert not saved.path.with_name("contextual_sample_pending.json").exists()


def test_completing_with_the_runs_judge_says_nothing(judge_env, tmp_path, capsys):
    saved = refused_run(judge_env, tmp_path, "judge-a", "1")
    pending = saved_records.pending_for(saved.path)
    records = [json.loads(line) for line in saved.path.read_text(encoding="utf-8").splitlines()]
    capsys.readouterr()
    with FakeOpenAIServer(lambda prompt: "Judgement: No") as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)  # another endpoint: not the judge's identity
        metrics, path = task_pipeline.complete_pending(saved.path, records, pending)
    assert "judge differs" not in capsys.readouterr().err
    assert "judge_changed" not in schema.read_report(path)["details"]["scored_later"]
    assert metrics["acceptance_rate"] == 0.0  # every reply "No": 0 of 4 accepted


def test_a_failed_scoring_says_scoring_failed(judge_env, tmp_path):
    saved = refused_run(judge_env, tmp_path, "judge-a", "1")
    first, last = saved_records_lines([saved])
    assert first.startswith(
        "lmms_eval: evaluation failed: contextual_sample: scoring failed: JudgingFailed: "
    )
    assert last.startswith("lmms_eval: contextual_sample: scoring failed after generation; ")
    (note,) = _pending_notes(saved.path.parent)
    assert ": contextual_sample: no report, scoring failed: JudgingFailed: " in note
    assert note.endswith(f"`lmms-eval-tasks score contextual {saved.path}`")
    assert KEY not in first + last + note


def test_a_failed_report_write_says_writing_the_report_failed(judge_env, tmp_path):
    judge_env.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    judge_env.setattr(schema, "write_report_files", full_disk)
    with pytest.raises(OSError):
        score_and_report(HOOKS, contextual_records(), "contextual_sample", args_for(tmp_path))
    (saved,) = saved_records.SAVED_FOR_SCORING
    assert saved.step == "writing the report"
    first, last = saved_records_lines([saved])
    assert first == (
        "lmms_eval: evaluation failed: contextual_sample: writing the report failed: OSError: "
        "[Errno 28] No space left on device"
    )
    assert last.startswith("lmms_eval: contextual_sample: writing the report failed after generation; ")
    assert "scoring failed" not in first + last
    (note,) = _pending_notes(saved.path.parent)
    assert (
        ": contextual_sample: no report, writing the report failed: OSError: [Errno 28] No space left" in note
    )
