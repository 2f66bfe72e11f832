"""An unwritable --output_path is refused before the host starts (it would only fail after inference)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lmms_eval_tasks.host import output_paths
from lmms_eval_tasks.host.output_paths import check_output_path, writability_problem
from tests.helpers import run_launcher


def test_writable_paths_pass_and_leave_nothing_behind(tmp_path: Path) -> None:
    assert writability_problem(tmp_path) is None
    assert writability_problem(tmp_path / "new" / "deeper") is None
    assert list(tmp_path.iterdir()) == []  # the probe is removed; the missing folders are not created
    assert check_output_path(["--model", "dummy", "--tasks", "x"]) is None  # no output path: nothing to check


def test_a_path_under_a_regular_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "results.txt"
    blocker.write_text("not a folder")
    problem = check_output_path(["--tasks", "x", "--output_path", str(blocker / "out")])
    assert problem == (
        f"--output_path {blocker / 'out'}: cannot create {blocker / 'out'}: {blocker} is not a directory; "
        "no evaluation was started"
    )
    assert "exists and is not a directory" in check_output_path([f"--output_path={blocker}"])
    # argparse-style abbreviations and the eval subcommand are read like the host reads them
    assert check_output_path(["eval", "--output", str(blocker / "out")]) is not None


def test_output_paths_in_a_config_file_are_checked(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    config = tmp_path / "config.yaml"
    config.write_text(
        f"- model: dummy\n  tasks: x\n  output_path: {tmp_path / 'fine'}\n"
        f"- model: dummy\n  tasks: x\n  output_path: {blocker / 'out'}\n"
    )
    problem = check_output_path(["--config", str(config)])
    assert problem is not None and str(blocker / "out") in problem


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder; see the next test")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "read_only"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert "Permission denied" in writability_problem(folder / "out")
    finally:
        folder.chmod(0o700)


def test_a_permission_error_is_reported_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the operating system answers a non-root user in a read-only folder (root cannot be refused)."""

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(output_paths.tempfile, "mkstemp", refuse)
    assert writability_problem(tmp_path / "out") == f"cannot write into {tmp_path} (Permission denied)"


@pytest.mark.slow
def test_launcher_fails_within_seconds_before_any_generation(tmp_path: Path) -> None:
    blocker = tmp_path / "some_file"
    blocker.write_text("a regular file")
    completed = run_launcher(
        "--tasks",
        "hallusionbench_offline_sample",
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--output_path",
        str(blocker / "out"),
        "--log_samples",
        timeout=120,
    )
    # "before any generation" is shown by what ran, not by a wall time (a flake on a loaded machine)
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert completed.stderr.strip().splitlines() == [
        f"lmms_eval: --output_path {blocker / 'out'}: cannot create {blocker / 'out'}: {blocker} is not a "
        "directory; no evaluation was started"
    ]
    assert "Evaluating" not in completed.stdout + completed.stderr  # the host never started
    assert sorted(path.name for path in tmp_path.iterdir()) == ["some_file"]
