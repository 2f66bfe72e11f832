"""docs/models.md's "Bring your own model", done as the page says: its three files installed with pip (into a
folder on the path, not the shared environment) and its `lmms_eval` command run: the model comes in through
the host's entry point and answers every question of a pack task."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, offline_environment, run_launcher

pytestmark = pytest.mark.slow

PAGE = REPO_ROOT / "docs" / "models.md"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split("## Bring your own model", 1)[1].split("\n## ", 1)[0]


def _files() -> dict[str, str]:
    """``{relative path: content}`` of every file the section shows (a bold path, then its code block)."""
    return dict(re.findall(r"\*\*`(my_models/[^`]+)`\*\*\n\n```\w+\n(.*?)```", _section(), flags=re.S))


def test_the_worked_example_installs_and_runs_a_pack_task(tmp_path: Path) -> None:
    files = _files()
    assert set(files) == {
        "my_models/pyproject.toml",
        "my_models/my_models/__init__.py",
        "my_models/my_models/always_yes.py",
    }
    for relative, content in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(content, encoding="utf-8")
    [install, command] = re.findall(r"```bash\n(.*?)\n(.*?)\n```", _section())[0]
    assert install == "pip install -e my_models"
    target = tmp_path / "site"
    subprocess.run(  # the page's install, into a folder of its own (the shared environment stays as it is)
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(tmp_path / "my_models")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    arguments = shlex.split(command)
    assert arguments[0] == "lmms_eval"
    output = tmp_path / "out"
    arguments[arguments.index("--output_path") + 1] = str(output)
    environment = offline_environment()
    environment["PYTHONPATH"] = os.pathsep.join([str(target), str(REPO_ROOT)])
    completed = run_launcher(*arguments[1:], environment=environment)
    assert completed.returncode == 0, completed.stderr[-3000:]
    [samples] = output.rglob("lmms_eval_tasks/*/hallusionbench_offline_sample_samples.jsonl")
    lines = samples.read_text(encoding="utf-8").splitlines()
    predictions = [json.loads(line)["prediction"] for line in lines]
    assert predictions and set(predictions) == {"Yes."}  # every question answered by the user's model
    [report] = output.rglob("lmms_eval_tasks/*/hallusionbench_offline_sample_report.json")
    assert json.loads(report.read_text(encoding="utf-8"))["provenance"]["model"] == "always_yes"
