"""The warm launcher (tests/warm_launcher.py) is used inside pytest and gives what a cold start gives."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests import warm_launcher
from tests.helpers import run_launcher

pytestmark = pytest.mark.slow

ARGUMENTS = ("--model", "random_guess", "--model_args", "seed=0", "--tasks", "hallusionbench_offline_sample")


def _normalised(text: str, output: Path) -> str:
    """The launcher's log without what differs between any two runs: clock times, run folders, rates, and
    the git commit the host records (that of the checkout holding the environment, which may move)."""
    text = text.replace(str(output), "OUTPUT")
    text = re.sub(r"commit: \w+", "commit: COMMIT", text)
    text = re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", "TIME", text)
    text = re.sub(r"\d{8}_\d{6}", "RUN", text)
    return re.sub(r"[\d.]+(it/s|s/it)|in [\d.]+s|\[\d\d:\d\d<\d\d:\d\d", "RATE", text)


def test_a_warm_run_is_served_by_the_warm_process_and_logs_what_a_cold_run_logs(tmp_path: Path) -> None:
    warm_output, cold_output = tmp_path / "warm", tmp_path / "cold"
    before = warm_launcher.served_runs
    warm = run_launcher(*ARGUMENTS, "--limit", "4", "--output_path", str(warm_output))
    assert warm_launcher.served_runs == before + 1  # not cold
    cold = run_launcher(*ARGUMENTS, "--limit", "4", "--output_path", str(cold_output), cold=True)
    assert warm_launcher.served_runs == before + 1
    assert warm.returncode == cold.returncode == 0, warm.stderr[-3000:] + cold.stderr[-3000:]
    assert _normalised(warm.stdout, warm_output) == _normalised(cold.stdout, cold_output)
    assert _normalised(warm.stderr, warm_output) == _normalised(cold.stderr, cold_output)
    warm_reports = sorted(path.name for path in warm_output.rglob("*_report.json"))
    assert warm_reports and warm_reports == sorted(path.name for path in cold_output.rglob("*_report.json"))


def test_variables_host_modules_set_on_import_reach_a_launcher_run_as_the_session_began(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """lmms-eval's `ola` model module, decord, torch and a benchmark script set variables in os.environ when
    a test imports them in-process; a user's shell never has them, and a run with them would start a second
    warm launcher."""
    from tests import helpers

    set_by_imports = {"FORCE_NO_DOWNSAMPLE", "MAXRES", "TORCHINDUCTOR_CACHE_DIR", "NUMEXPR_NUM_THREADS"}
    set_by_imports.add("LMMS_CACHE_RUN_ID")  # left by an in-process launcher run with --use_cache
    for name in set_by_imports:
        assert name not in helpers._STARTUP_ENVIRONMENT, name  # this shell set none of them
        monkeypatch.setenv(name, "set-by-an-import")
    monkeypatch.setenv("PATH", os.environ["PATH"] + os.pathsep + "/decord/appends/its/folder")
    monkeypatch.setenv("HF_ENDPOINT", "http://a-test-sets-this")  # what a test sets still reaches the run
    environment = helpers.offline_environment()
    assert not set_by_imports & set(environment)
    assert environment["PATH"] == helpers._STARTUP_ENVIRONMENT["PATH"]
    assert environment["HF_ENDPOINT"] == "http://a-test-sets-this"
