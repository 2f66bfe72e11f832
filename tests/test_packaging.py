"""The built wheel carries what an installed pack needs: task YAML and templates, sample data, prompts,
and the console scripts and model entry point the README promises."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from lmms_eval_tasks import TASKS_DIR
from tests.helpers import REPO_ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(folder),
            str(REPO_ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    [wheel] = folder.glob("lmms_eval_tasks-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_holds_every_task_file_and_sample(wheel_names: set[str]) -> None:
    package_root = TASKS_DIR.parent.parent
    expected = {
        path.relative_to(package_root).as_posix()
        for path in TASKS_DIR.rglob("*")
        if path.is_file() and (path.suffix in {".yaml", ".parquet", ".py"} or path.name.endswith("_yaml"))
    }
    assert expected, "no task files found"
    assert expected <= wheel_names, sorted(expected - wheel_names)[:10]


def test_wheel_holds_judge_prompts_byte_for_byte(wheel_names: set[str]) -> None:
    prompts = {
        f"lmms_eval_tasks/judges/prompts/{path.name}"
        for path in (TASKS_DIR.parent / "judges" / "prompts").glob("*.txt")
    }
    assert len(prompts) >= 4
    assert prompts <= wheel_names


def test_installed_distribution_declares_scripts_and_model_entry_point() -> None:
    from importlib.metadata import entry_points

    scripts = {entry.name: entry.value for entry in entry_points(group="console_scripts")}
    assert scripts["lmms_eval"] == "lmms_eval_tasks.host.launcher:run"
    assert scripts["lmms-eval-tasks"] == "lmms_eval_tasks.cli:run"
    models = {entry.name: entry.value for entry in entry_points(group="lmms_eval.models")}
    assert models["lmms_eval_tasks"] == "lmms_eval_tasks.models:model_manifests"
