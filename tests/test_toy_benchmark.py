"""A toy benchmark in one folder, written by following docs/architecture.md "How to add a benchmark".

The test copies the package into tmp_path, adds ``lmms_eval_tasks/tasks/mybench/`` (registry entry with the
documented record schema, scoring, parsers, hooks, generator) and ``docs/mybench.md`` and nothing else, then
runs ``python -m lmms_eval_tasks.framework.taskgen mybench`` (what ``make generate`` runs), the launcher on
``mybench_sample`` with the random baseline, ``score`` (plain, ``--options-from`` the run's report,
``--details``, a bad option), ``compare`` and ``report``, each in a subprocess with the copy first on
PYTHONPATH. Four sample questions, the random baseline answers red or blue (seeded): accuracy is
100 * correct / 4, and ``score`` of the saved records must give the report's number.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, offline_environment

pytestmark = pytest.mark.slow

INIT = '''\
"""MyBench: a toy benchmark written from docs/architecture.md, "How to add a benchmark"."""

from lmms_eval_tasks.framework.records import RecordField, RecordSchema
from lmms_eval_tasks.framework.registry import Benchmark

RECORD_SCHEMA = RecordSchema(
    fields=(
        RecordField("question_id", "id"),
        RecordField("answer", "str"),
        RecordField("prediction", "str", nullable=True),
    ),
    identity=("question_id",),
    example=({"question_id": 1, "answer": "cat", "prediction": "cat"},),
)

BENCHMARK = Benchmark(
    name="mybench",
    title="MyBench (venue year)",
    description="what it measures, in one line",
    record_schema=RECORD_SCHEMA,
    behaviour="lmms_eval_tasks.tasks.mybench.behaviour",
    headline_metrics=("accuracy", "unparsed"),
    sample_tasks=("mybench_sample",),
    docs="docs/mybench.md",
)
'''

SCORING = '''\
"""MyBench scoring: exact match after lower-casing, in percent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks.framework.input_checks import check_option
from lmms_eval_tasks.framework.registry import scorer


@dataclass(frozen=True)
class Options:
    """MyBench's options, each checked with check_option."""

    bonus: float = 0.0  # a toy number added to accuracy

    def __post_init__(self) -> None:
        check_option("bonus", self.bonus, float, minimum=0)


def normalise(text: str | None) -> str | None:
    """The prediction compared: stripped and lower-cased; None when there is none (never raises)."""
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip().lower()


def _correct(record: dict[str, Any]) -> bool | None:
    prediction = normalise(record.get("prediction"))
    return None if prediction is None else prediction == record["answer"].strip().lower()


@scorer(Options)
def score(records: list[dict[str, Any]], options: Options) -> tuple[dict[str, Any], dict[str, Any]]:
    """Accuracy in percent over every record (unparsed = no prediction, counted wrong), plus ``bonus``;
    no details."""
    verdicts = [_correct(record) for record in records]
    metrics = {
        "accuracy": 100.0 * sum(bool(v) for v in verdicts) / len(verdicts) + options.bonus,
        "unparsed": sum(v is None for v in verdicts),
    }
    return metrics, {}


@scorer(Options)
def per_question_correct(records: list[dict[str, Any]], options: Options) -> dict[str, bool]:
    """{question_id: correct} for compare."""
    return {str(record["question_id"]): bool(_correct(record)) for record in records}
'''

PARSERS = '''\
"""MyBench's parsers of untrusted text, for the parser index (the hostile-output guard runs each)."""

from lmms_eval_tasks.framework.parser_index import ParserEntry

PARSERS: list[ParserEntry] = [
    ParserEntry("mybench.normalise", "lmms_eval_tasks.tasks.mybench.scoring:normalise", ("str", "NoneType")),
]
'''

HOOKS = '''\
"""lmms-eval hooks for MyBench: image, question, one score record per question."""

from __future__ import annotations

import random
from typing import Any

from lmms_eval_tasks.framework.hook_factory import TaskHooks


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """The score record of one question."""
    return {"question_id": doc["question_id"], "answer": doc["answer"], "prediction": results[0]}


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The question's image."""
    return [doc["image"].convert("RGB")]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The question."""
    return doc["question"]


def task_settings(task: str) -> dict[str, Any]:
    """No settings."""
    return {}


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random colour word."""
    return rng.choice(["red", "blue"])


HOOKS = TaskHooks("mybench", make_record, task_settings=task_settings)
process_results = HOOKS.process_results
'''

GENERATE = '''\
"""Every generated file of MyBench."""

from __future__ import annotations

from lmms_eval_tasks.framework import sample_data, taskgen

FOLDER = "lmms_eval_tasks/tasks/mybench"
HOOKS = "lmms_eval_tasks.tasks.mybench.hooks"
SOURCE = "lmms_eval_tasks/tasks/mybench/generate.py"


def _rows() -> list[dict]:
    rows = []
    for index, colour in enumerate(["red", "blue", "red", "blue"]):
        image, draw = sample_data.canvas(32, 32, sample_data.COLOURS[colour])
        rows.append({"question_id": index, "question": "Which colour is the square?", "answer": colour,
                     "image": sample_data.image_cell(image)})
    return rows


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content}."""
    spec = taskgen.TaskYaml(
        task="mybench_sample",
        hooks=HOOKS,
        metrics=[("accuracy", True), ("unparsed", False)],
        fields={
            "dataset_path": "parquet",
            "dataset_kwargs": {"data_files": {"test": "sample/mybench_sample.parquet"}},
            "test_split": "test",
            **taskgen.hook_fields(
                HOOKS, doc_to_target="answer", generation_kwargs=taskgen.greedy_generation(8)
            ),
        },
        docs_module="lmms_eval_tasks.tasks.mybench.task_docs",
        description="MyBench bundled sample",
    )
    return taskgen.benchmark_files(
        FOLDER, SOURCE, HOOKS, [spec], samples=sample_data.sample_parquet("mybench_sample.parquet", _rows())
    )
'''

BEHAVIOUR = '''\
"""What MyBench does, by direct reference."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.mybench.generate import generated_files
from lmms_eval_tasks.tasks.mybench.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.mybench.parsers import PARSERS
from lmms_eval_tasks.tasks.mybench.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    per_question=per_question_correct,
    parsers=PARSERS,
    random_answer=random_answer,
    generated_files=generated_files,
    hooks=HOOKS,
)
'''

FILES = {"__init__.py": INIT, "scoring.py": SCORING, "parsers.py": PARSERS, "hooks.py": HOOKS,
         "generate.py": GENERATE, "behaviour.py": BEHAVIOUR}  # fmt: skip


def _run(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    environment = offline_environment(PYTHONPATH=str(root))
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, env=environment, cwd=root, timeout=600,
        check=False,
    )  # fmt: skip


def test_a_benchmark_in_one_folder_runs_through_launcher_score_compare_report(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(
        REPO_ROOT / "lmms_eval_tasks", root / "lmms_eval_tasks", ignore=shutil.ignore_patterns("__pycache__")
    )
    folder = root / "lmms_eval_tasks" / "tasks" / "mybench"
    folder.mkdir()
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "mybench.md").write_text("# MyBench\n\nA toy benchmark.\n", encoding="utf-8")

    generated = _run(root, "-m", "lmms_eval_tasks.framework.taskgen", "mybench")
    assert generated.returncode == 0, generated.stderr[-2000:]
    assert (folder / "yaml" / "mybench_sample.yaml").is_file() and (folder / "task_docs.py").is_file()
    assert len((folder / "yaml" / "mybench_sample.yaml").read_text("utf-8").splitlines()) < 12  # a stub

    listed = _run(root, "-c", "from lmms_eval_tasks.framework.parser_index import all_parsers as a; "
                  "print([p.name for p in a() if p.name.startswith('mybench')])")  # fmt: skip
    assert listed.stdout.strip() == "['mybench.normalise']", listed.stderr

    out = tmp_path / "out"
    run = _run(root, "-m", "lmms_eval_tasks", "--model", "random_guess", "--tasks", "mybench_sample",
               "--output_path", str(out), "--log_samples")  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    [records] = out.rglob("lmms_eval_tasks/*/mybench_sample_samples.jsonl")
    [report_path] = out.rglob("lmms_eval_tasks/*/mybench_sample_report.json")
    report = json.loads(report_path.read_text("utf-8"))
    rows = [json.loads(line) for line in records.read_text("utf-8").splitlines() if line.strip()]
    assert len(rows) == 4 and report["benchmark"] == "mybench"
    correct = sum(row["prediction"] == row["answer"] for row in rows)
    assert report["metrics"]["accuracy"] == pytest.approx(100.0 * correct / 4)  # 25 points per question
    assert report["provenance"]["settings"]["score_options"] == {}

    cli = ("-m", "lmms_eval_tasks.cli")
    scored = _run(root, *cli, "score", "mybench", str(records))
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout) == {"accuracy": report["metrics"]["accuracy"], "unparsed": 0}
    again = _run(
        root, *cli, "score", "mybench", str(records), "--details", "--options-from", str(report_path)
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["options"] == {}
    assert json.loads(again.stdout)["metrics"]["accuracy"] == report["metrics"]["accuracy"]
    bonus = _run(root, *cli, "score", "mybench", str(records), "-o", "bonus=2")  # accuracy + 2 points
    assert json.loads(bonus.stdout)["accuracy"] == pytest.approx(100.0 * correct / 4 + 2)
    bad = _run(root, *cli, "score", "mybench", str(records), "-o", "bonus=-1")
    assert bad.returncode == 2 and "option bonus: expected a number >= 0, got -1" in bad.stderr

    compared = _run(root, *cli, "compare", "mybench", str(records), str(records))
    assert compared.returncode == 0, compared.stderr
    result = json.loads(compared.stdout)
    assert (result["questions"], result["both_correct"], result["b01"], result["b10"]) == (4, correct, 0, 0)

    reported = _run(root, *cli, "report", str(out), "--out", str(tmp_path / "report"))
    assert reported.returncode == 0, reported.stderr
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "## MyBench (venue year)" in markdown and "random_guess / mybench_sample" in markdown
