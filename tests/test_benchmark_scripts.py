"""Every script in benchmarks/ runs in its quick mode and ends with a RESULT line: a broken benchmark fails
the tests (their timings are for `make bench`; this checks only that each script still works).

The scripts that import lmms-eval in their own process (`IMPORTS_THE_HOST`) run as `python SCRIPT --quick`
in a child forked from a process that has already imported the host (tests/warm_launcher.py, as the tests'
launcher runs do): that import, 10-15 s of CPU each, is no part of what they check; the script itself runs
from its first line in its own process, with its own arguments, environment, working directory, output and
exit status. The others start cold, as `python SCRIPT` does: forked warm, they measured the same CPU in all
(65.3 vs 65.8 s for the file), and a cold start cannot lean on a module the host's import loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO_ROOT, offline_environment, refuse_in_quick_tests, run_launcher

pytestmark = pytest.mark.slow

SCRIPTS = sorted((REPO_ROOT / "benchmarks").glob("*.py"))
# Figures a script's RESULT line must name, beyond ending in `name=value` pairs.
RESULT_KEYS = {"uncertainty": ("seconds", "hallusionbench_seconds")}
# --quick measured cold -> warm: 19.0 -> 4.8, 17.9 -> 7.6 and 10.6 -> 0.8 s of CPU, for one server (~10 s).
IMPORTS_THE_HOST = {"launcher_overhead", "pack_calls", "server_throughput", "vrb_aggregation", "vrb_memory"}
# `python -c RUN_SCRIPT SCRIPT ARGS` is `python SCRIPT ARGS`: the script's folder first on sys.path, its own
# argv, run as __main__ (the warm launcher runs a `python -c` program; see the module docstring).
RUN_SCRIPT = (
    "import os, runpy, sys; sys.argv = sys.argv[1:]; sys.path[0] = os.path.dirname(sys.argv[0]); "
    "runpy.run_path(sys.argv[0], run_name='__main__')"
)


def test_the_benchmark_folder_is_found():
    assert len(SCRIPTS) >= 10, SCRIPTS  # discovered by glob: a new script joins the test by itself


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_benchmark_script_runs_in_quick_mode(script: Path):
    refuse_in_quick_tests(f"benchmarks/{script.name}")
    environment = offline_environment(PYTHONPATH=str(REPO_ROOT))
    if script.stem in IMPORTS_THE_HOST:  # the launcher runs' environment, so they share its warm server
        # (the scripts put the repository on sys.path themselves; a PYTHONPATH would start a second server)
        completed = run_launcher(str(script), "--quick", code=RUN_SCRIPT, environment=offline_environment())
    else:
        completed = subprocess.run(
            [sys.executable, str(script), "--quick"],
            capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=900, check=False,
        )  # fmt: skip
    assert completed.returncode == 0, f"{script.name} --quick failed:\n{completed.stderr[-3000:]}"
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("RESULT "), f"{script.name}: last line {lines[-1:]!r}"
    assert "=" in lines[-1]
    expected = RESULT_KEYS.get(script.stem)
    if expected:  # the headline figure first, the others anywhere
        names = [pair.split("=", 1)[0] for pair in lines[-1].removeprefix("RESULT ").split()]
        assert names[0] == expected[0] and set(expected) <= set(names), lines[-1]


def test_judge_integrity_measures_the_judge_it_is_given():
    """`benchmarks/judge_integrity.py --base-url URL --model NAME` judges at that endpoint with that model and
    the key from the environment, and says which judge it measured (docs/judges.md: how to measure a real
    judge). Here the endpoint serves the script's own local judge, so the numbers must be the same."""
    refuse_in_quick_tests("benchmarks/judge_integrity.py")
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    from fake_openai import FakeOpenAIServer
    from judge_integrity import quoting_judge

    with FakeOpenAIServer(quoting_judge, max_prompt_chars=6000) as server:
        completed = subprocess.run(
            [sys.executable, str(REPO_ROOT / "benchmarks" / "judge_integrity.py"), "--quick",
             "--base-url", server.base_url, "--model", "served-judge"],
            capture_output=True, text=True, cwd=REPO_ROOT, timeout=900, check=False,
            env=offline_environment(PYTHONPATH=str(REPO_ROOT), OPENAI_API_KEY="sk-given-judge-key"),
        )  # fmt: skip
        calls = list(server.calls)
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    assert lines[0].startswith("judge: served-judge (http://127.0.0.1:")
    assert calls and {call.body["model"] for call in calls} == {"served-judge"}
    keys = {
        value for call in calls for name, value in call.headers.items() if name.lower() == "authorization"
    }
    assert keys == {"Bearer sk-given-judge-key"}
    # the script's own local judge gives the same: planted verdict 100 % official, 0 % default
    expected = "planted_official=100 planted_default=0 honest_random=0 worst_default=0 unjudged=0"
    assert lines[-1] == f"RESULT {expected}"
