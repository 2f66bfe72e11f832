"""A toy benchmark written by `lmms-eval-tasks new-benchmark`, as docs/architecture.md "How to add a
benchmark" says: the skeleton, run as written.

The test copies the package and pyproject.toml into tmp_path (with empty ``tests/`` and ``docs/``, as in a
clone) and runs ``new-benchmark mybench`` there, which writes ``lmms_eval_tasks/tasks/mybench/`` (registry
entry, behaviour, scorer, hooks, generator, and what the generator makes), ``tests/mybench/`` and
``docs/mybench.md``; then the skeleton's own tests (its scorer on hand-computed records; ``mybench_sample``
through the launcher with the random baseline and ``score`` on the saved records), ``score``
(``--options-from`` the run's report, ``--details``, an option it does not have), ``compare`` and
``report`` on that run, each in a subprocess with the copy first on PYTHONPATH. Six sample questions,
answered yes or no by the random baseline (seeded): accuracy is 100 * correct / 6.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.judges.rules import extract_yes_no
from tests.helpers import REPO_ROOT, offline_environment

pytestmark = pytest.mark.slow


def _run(root: Path, *argv: str | Path) -> subprocess.CompletedProcess[str]:
    environment = offline_environment(PYTHONPATH=str(root))
    return subprocess.run(
        [sys.executable, *map(str, argv)], capture_output=True, text=True, env=environment, cwd=root,
        timeout=600, check=False,
    )  # fmt: skip


def test_a_benchmark_in_one_folder_runs_through_launcher_score_compare_report(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(
        REPO_ROOT / "lmms_eval_tasks", root / "lmms_eval_tasks", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").touch()
    (root / "docs").mkdir()
    cli = ("-m", "lmms_eval_tasks.cli")
    written = _run(root, *cli, "new-benchmark", "mybench")
    assert written.returncode == 0, written.stderr[-2000:]
    folder = root / "lmms_eval_tasks" / "tasks" / "mybench"
    assert (folder / "task_docs.py").is_file() and (root / "docs" / "mybench.md").is_file()
    assert len((folder / "yaml" / "mybench_sample.yaml").read_text("utf-8").splitlines()) < 12  # a stub
    again = _run(root, *cli, "new-benchmark", "mybench")
    assert again.returncode == 2 and "exists already" in again.stderr
    linted = _run(root, "-m", "ruff", "check", "lmms_eval_tasks/tasks/mybench", "tests")
    assert linted.returncode == 0, linted.stdout

    # the skeleton's own tests, its launcher run kept (in --basetemp) for what follows
    quiet = ("-q", "-p", "no:cacheprovider", "-o", "addopts=")  # not the pack's own test plugin
    tested = _run(root, "-m", "pytest", *quiet, "--basetemp", tmp_path / "pytest", "tests/mybench")
    assert tested.returncode == 0 and "3 passed" in tested.stdout, tested.stdout[-3000:]
    out = tmp_path / "pytest"
    [records] = out.rglob("lmms_eval_tasks/*/mybench_sample_samples.jsonl")
    [report_path] = out.rglob("lmms_eval_tasks/*/mybench_sample_report.json")
    report = json.loads(report_path.read_text("utf-8"))
    rows = [json.loads(line) for line in records.read_text("utf-8").splitlines() if line.strip()]
    assert len(rows) == 6 and report["benchmark"] == "mybench"
    correct = sum(extract_yes_no(row["prediction"]) == row["answer"] for row in rows)
    assert report["metrics"]["accuracy"] == pytest.approx(100.0 * correct / 6)
    assert report["provenance"]["settings"]["score_options"] == {}

    scored = _run(root, *cli, "score", "mybench", str(records), "--details", "--options-from", report_path)
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["options"] == {}
    assert json.loads(scored.stdout)["metrics"]["accuracy"] == report["metrics"]["accuracy"]
    bad = _run(root, *cli, "score", "mybench", str(records), "-o", "bonus=2")  # the skeleton has no options
    assert bad.returncode == 2 and "bonus" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1

    compared = _run(root, *cli, "compare", "mybench", str(records), str(records))
    assert compared.returncode == 0, compared.stderr
    result = json.loads(compared.stdout)
    assert (result["questions"], result["both_correct"], result["b01"], result["b10"]) == (6, correct, 0, 0)

    reported = _run(root, *cli, "report", str(report_path.parents[2]), "--out", str(tmp_path / "report"))
    assert reported.returncode == 0, reported.stderr
    markdown = (tmp_path / "report" / "report.md").read_text("utf-8")
    assert "## mybench" in markdown and "random_guess / mybench_sample" in markdown
