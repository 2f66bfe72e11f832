"""The shared task shape end to end: a toy benchmark built only from TaskHooks + taskgen runs in the host.

Two tasks and a group over four generated questions; the group's number must be the scorer run on the
union of both tasks' records (not a mean of task numbers), and each task's report must carry its scoring.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.taskgen import (
    Function,
    GroupYaml,
    TaskYaml,
    render_group,
    render_task,
    task_docs_module,
)
from tests.helpers import offline_environment, results_json, run_launcher

TOY_PACKAGE = """
from lmms_eval_tasks.framework import registry
from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark
from tests.helpers import toy_schema

SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField("answer", "str"),
        RecordField("prediction", "str"),
        RecordField("task", "str", required=False),
    ),
    identity=("task", "question_id"),
)

registry.register(
    Benchmark(
        name="toyshape",
        title="Toy",
        description="toy benchmark for the task-shape test",
        behaviour="toyshape.behaviour",
        record_schema=SCHEMA,
        headline_metrics=("accuracy", "answered"),
    )
)
"""

TOY_SCORING = """
from dataclasses import dataclass

from lmms_eval_tasks.framework.registry import scorer


def score_options(task):
    return {"bonus": 0.0}


@dataclass(frozen=True)
class Options:
    bonus: float = 0.0


@scorer(Options)
def score(records, options):
    correct = [record["prediction"].strip().lower() == record["answer"] for record in records]
    metrics = {
        "accuracy": 100.0 * sum(correct) / len(correct) + options.bonus,
        "answered": len(records),
        "tasks_seen": len({record["task"] for record in records}),
    }
    return metrics, {}
"""

TOY_HOOKS = """
from lmms_eval_tasks.framework.hook_factory import TaskHooks
import toyshape  # registers the benchmark


def make_record(doc, results, task):
    return {"question_id": doc["question_id"], "answer": doc["answer"], "prediction": results[0]}


def task_settings(task):
    return {"toy_setting": task}


def doc_to_visual(doc):
    return []


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"]


HOOKS = TaskHooks("toyshape", make_record, task_settings=task_settings)
process_results = HOOKS.process_results
"""

TOY_BEHAVIOUR = """
from lmms_eval_tasks.framework.registry import Behaviour
from toyshape.hooks import HOOKS
from toyshape.scoring import score, score_options

BEHAVIOUR = Behaviour(score=score, task_options=score_options, hooks=HOOKS)
"""


@pytest.mark.slow
def test_toy_benchmark_tasks_and_group_through_the_launcher(tmp_path: Path) -> None:
    package = tmp_path / "code" / "toyshape"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TOY_PACKAGE, encoding="utf-8")
    (package / "scoring.py").write_text(TOY_SCORING, encoding="utf-8")
    (package / "hooks.py").write_text(TOY_HOOKS, encoding="utf-8")
    (package / "behaviour.py").write_text(TOY_BEHAVIOUR, encoding="utf-8")
    tasks = ["toyshape_a", "toyshape_b"]

    folder = package  # the YAML beside task_docs.py, which resolves the names it references
    rows = [
        {"question_id": index, "question": f"Is {index} even? Answer yes or no.", "answer": answer}
        for index, answer in enumerate(["yes", "no", "yes", "no"])
    ]
    (folder / "toy.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    metrics = [("accuracy", True), ("answered", True)]
    for task in tasks:
        settings = {
            "dataset_path": "json",
            "dataset_kwargs": {"data_files": {"test": "toy.jsonl"}},
            "test_split": "test",
            "output_type": "generate_until",
            "doc_to_visual": Function("toyshape.hooks.doc_to_visual"),
            "doc_to_text": Function("toyshape.hooks.doc_to_text"),
            "doc_to_target": "answer",
            "process_results": Function("toyshape.hooks.process_results"),
            "generation_kwargs": {"max_new_tokens": 4},
        }
        spec = TaskYaml(task, "toyshape.hooks", metrics, settings, docs_module="toyshape.task_docs")
        (folder / f"{task}.yaml").write_text(render_task(spec, "test"), encoding="utf-8")
    group = GroupYaml("toyshape_all", tasks, "toyshape.hooks", metrics, "both toy tasks")
    (folder / "toyshape_all.yaml").write_text(render_group(group, "test"), encoding="utf-8")
    # the per-task aggregations and the group's, as taskgen generates them for a benchmark
    (package / "task_docs.py").write_text(task_docs_module("toyshape.hooks", "test"), encoding="utf-8")

    output = tmp_path / "out"
    repository = str(Path(__file__).resolve().parents[1])  # the toy package imports tests.helpers
    environment = offline_environment(PYTHONPATH=os.pathsep.join([str(tmp_path / "code"), repository]))
    result = run_launcher(
        "--model", "dummy", "--model_args", "response=yes",
        "--tasks", "toyshape_all", "--include_path", str(folder),
        "--output_path", str(output), "--log_samples",
        environment=environment, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    results = results_json(output)["results"]
    # "yes" is right for questions 0 and 2 of 4 in each task: 50% per task and over the union of 8 records.
    assert results["toyshape_a"]["accuracy,none"] == pytest.approx(50.0)
    assert results["toyshape_a"]["answered,none"] == 4
    # The group is scored on the union of both tasks' records: 8 answered, not a mean or a size-weighted 4.
    assert results["toyshape_all"]["answered,none"] == 8
    assert results["toyshape_all"]["accuracy,none"] == pytest.approx(50.0)
    reports = sorted(output.rglob("toyshape_all_report.json"))
    assert reports, sorted(str(path) for path in output.rglob("*"))
    group_report = json.loads(reports[-1].read_text(encoding="utf-8"))
    assert group_report["metrics"]["tasks_seen"] == 2  # the union holds records of both member tasks
    task_report = json.loads(sorted(output.rglob("toyshape_a_report.json"))[-1].read_text(encoding="utf-8"))
    assert task_report["benchmark"] == "toyshape"
    assert task_report["metrics"]["tasks_seen"] == 1
