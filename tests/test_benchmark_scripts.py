"""Every script in benchmarks/ runs in its quick mode and ends with a RESULT line: a broken benchmark fails
the tests (their timings are for `make bench`; this checks only that each script still works)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, offline_environment

pytestmark = pytest.mark.slow

SCRIPTS = sorted((REPO_ROOT / "benchmarks").glob("*.py"))


def test_the_benchmark_folder_is_found():
    assert len(SCRIPTS) >= 10, SCRIPTS  # discovered by glob: a new script joins the test by itself


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_benchmark_script_runs_in_quick_mode(script: Path):
    completed = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        text=True,
        env=offline_environment(PYTHONPATH=str(REPO_ROOT)),
        cwd=REPO_ROOT,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, f"{script.name} --quick failed:\n{completed.stderr[-3000:]}"
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("RESULT "), f"{script.name}: last line {lines[-1:]!r}"
    assert "=" in lines[-1]
