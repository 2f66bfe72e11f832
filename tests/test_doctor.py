"""`lmms-eval-tasks doctor`: a good setup passes; each broken one gives its line, fix and exit code."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.doctor import benchmark_datasets, check_datasets, check_judge, check_models
from lmms_eval_tasks.host import patches as host
from tests.fake_openai import FakeOpenAIServer
from tests.helpers import REPO_ROOT, offline_environment

SECRET = "sk-doctor-test-9f8e7d6c5b4a"
JUDGE_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_API_URL",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "LMMS_EVAL_TASKS_JUDGE_BASE_URL",
    "LMMS_EVAL_TASKS_JUDGE_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_ENDPOINT",
    "API_TYPE",
)


@pytest.fixture
def no_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _doctor_json(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict]:
    code = cli_main(["doctor", "--json", *arguments])
    return code, json.loads(capsys.readouterr().out)


def _by_name(payload: dict) -> dict[str, dict]:
    return {check["name"]: check for check in payload["checks"]}


def _closed_port() -> int:
    """A local port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_good_setup_passes(capsys: pytest.CaptureFixture[str], tiny_llava_dir: Path, no_judge: None) -> None:
    code = cli_main(["doctor", "--tiny-llava", str(tiny_llava_dir)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert text.splitlines()[-1] == "all required checks pass"
    for line in (
        "✓ lmms-eval version",
        "✓ patch pack_task_index",
        "✓ patch llava_hf_text_only",
        "✓ torch",
        "✓ transformers",
        "✓ wordnet",
        "✓ tiny llava",
        "✓ pack models",
        "✓ llava_hf",
        "✗ llava ",
    ):
        assert any(row.lstrip().startswith(line) for row in text.splitlines()), (line, text)
    # informational failures (no judge, datasets not cached here) do not change the exit code
    assert "judge (informational):" in text and "not configured" in text
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    assert code == 0 and payload["ok"] is True
    checks = _by_name(payload)
    assert all(check["ok"] for check in payload["checks"] if check["required"])
    assert checks["judge endpoint"]["required"] is False and checks["judge endpoint"]["ok"] is False
    assert checks["lmms-eval version"]["summary"] == "lmms-eval 0.7.3 (supported: >=0.7.3,<0.7.4)"


def test_unsupported_host_version(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny_llava_dir: Path, no_judge: None
) -> None:
    monkeypatch.setattr(host, "host_version", lambda: "0.8.1")
    code = cli_main(["doctor", "--tiny-llava", str(tiny_llava_dir)])
    text = capsys.readouterr().out
    assert code == 1
    assert "  ✗ lmms-eval version            lmms-eval 0.8.1 (supported: >=0.7.3,<0.7.4)" in text
    assert "fix: pip install 'lmms-eval>=0.7.3,<0.7.4'" in text
    assert "✗ patch loglikelihood_result   skipped: written for lmms-eval ==0.7.3, this host is 0.8.1" in text
    assert text.splitlines()[-1].startswith(
        "9 required check(s) failed: lmms-eval version, patch pack_task_index"
    )
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    assert code == 1 and payload["ok"] is False
    assert not any(check["ok"] for name, check in _by_name(payload).items() if name.startswith("patch "))


def test_a_version_in_range_but_untested_fails_on_the_patches_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny_llava_dir: Path, no_judge: None
) -> None:
    # A future release that widens the supported range before every patch is re-declared for it.
    monkeypatch.setattr(host, "SUPPORTED_HOST_VERSIONS", ">=0.7.3,<0.8")
    monkeypatch.setattr(host, "host_version", lambda: "0.7.4")
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    checks = _by_name(payload)
    assert code == 1 and checks["lmms-eval version"]["ok"] is True
    assert checks["patch failure_recorder"]["summary"] == (
        "skipped: written for lmms-eval ==0.7.3, this host is 0.7.4"
    )
    assert "exit 0" in checks["patch failure_recorder"]["fix"]  # what a run loses without it


def test_missing_tiny_llava(capsys: pytest.CaptureFixture[str], tmp_path: Path, no_judge: None) -> None:
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tmp_path / "nowhere"))
    check = _by_name(payload)["tiny llava"]
    assert code == 1 and check["ok"] is False and check["required"] is True
    assert "make tiny-llava" in check["fix"]


def test_unreachable_judge_is_reported_without_the_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tiny_llava_dir: Path, no_judge: None
) -> None:
    port = _closed_port()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = cli_main(["doctor", "--tiny-llava", str(tiny_llava_dir)])
    text = capsys.readouterr().out
    assert code == 0  # informational: the rule judge still works
    (line,) = [row for row in text.splitlines() if "judge endpoint" in row]
    assert line.lstrip().startswith("✗ judge endpoint")
    assert f"openai endpoint http://127.0.0.1:{port}/v1 (from OPENAI_BASE_URL + OPENAI_API_KEY)" in line
    assert "is not reachable" in line and "refused" in line.lower()
    assert SECRET not in text
    code, payload = _doctor_json(capsys, "--tiny-llava", str(tiny_llava_dir))
    assert code == 0 and SECRET not in json.dumps(payload)


def test_reachable_judge(monkeypatch: pytest.MonkeyPatch, no_judge: None) -> None:
    with FakeOpenAIServer() as server:
        base_url = server.base_url
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        check = check_judge()
    assert check.ok, check
    assert check.summary.startswith(f"openai endpoint {base_url} ") and "answers (HTTP" in check.summary
    assert SECRET not in repr(check)


def test_no_wordnet_fails_with_its_fix(tmp_path: Path, tiny_llava_dir: Path) -> None:
    """NLTK_DATA at an empty folder (and HOME too, so ~/nltk_data cannot help): required check fails."""
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    environment = offline_environment(NLTK_DATA=str(empty), HOME=str(tmp_path))
    command = [sys.executable, "-m", "lmms_eval_tasks.cli", "doctor", "--json"]
    completed = subprocess.run(
        [*command, "--tiny-llava", str(tiny_llava_dir)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO_ROOT,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr[-2000:]
    payload = json.loads(completed.stdout)
    failed = [check["name"] for check in payload["checks"] if check["required"] and not check["ok"]]
    assert failed == ["wordnet"]
    wordnet = _by_name(payload)["wordnet"]
    assert wordnet["summary"].startswith("nltk cannot load WordNet: LookupError")
    assert "make wordnet" in wordnet["fix"] and str(empty) in wordnet["fix"]


def test_model_list_on_this_machine() -> None:
    """llava_hf and the pack's baseline import here; the original-LLaVA wrapper does not."""
    checks = {check.name: check for check in check_models()}
    assert checks["llava_hf"].ok and checks["random_guess"].ok
    assert not checks["llava"].ok
    assert "No module named 'llava'" in checks["llava"].summary
    assert "--model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf" in checks["llava"].fix
    assert all(not check.required for check in checks.values())
    every = {check.name for check in check_models(all_models=True)}
    assert set(checks) <= every and len(every) > 100


def test_benchmark_datasets_come_from_the_task_yaml() -> None:
    datasets = benchmark_datasets()
    (hallusionbench,) = datasets["hallusionbench"]
    assert hallusionbench[:2] == ("lmms-lab/HallusionBench", None) and len(hallusionbench[2]) == 3
    assert [(path, name) for path, name, _ in datasets["dare"]] == [
        ("cambridgeltl/DARE", "1_correct"),
        ("cambridgeltl/DARE", "1_correct_var"),
        ("cambridgeltl/DARE", "n_correct"),
    ]
    assert not any(name.endswith("_sample") for _, _, tasks in datasets["dare"] for name in tasks)


def test_dataset_cache_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LMMS_EVAL_DATASETS_CACHE", raising=False)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    checks = {check.name: check for check in check_datasets()}
    assert not checks["hallusionbench"].ok and not checks["hallusionbench"].required
    assert checks["hallusionbench"].summary == "not cached: lmms-lab/HallusionBench"
    (tmp_path / "datasets" / "lmms-lab___HallusionBench" / "default" / "0.0.0").mkdir(parents=True)
    (tmp_path / "hub" / "datasets--cambridgeltl--DARE" / "snapshots" / "0123abc").mkdir(parents=True)
    (tmp_path / "datasets" / "cambridgeltl___DARE" / "n_correct").mkdir(parents=True)
    checks = {check.name: check for check in check_datasets()}
    assert checks["hallusionbench"].ok
    assert checks["hallusionbench"].summary == "cached: lmms-lab/HallusionBench (datasets cache)"
    assert checks["dare"].ok
    assert "cambridgeltl/DARE [1_correct] (hub cache)" in checks["dare"].summary
    assert "cambridgeltl/DARE [n_correct] (datasets cache)" in checks["dare"].summary
