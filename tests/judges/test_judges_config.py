"""Judge selection and configuration from the host's environment variables plus pack overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, isolate_judge_env

from lmms_eval_tasks.judges import JudgeRequest, get_judge
from lmms_eval_tasks.judges.config import DEFAULT_MODEL, normalise_base_url, resolve_endpoint
from lmms_eval_tasks.judges.openai_judge import OpenAIJudge
from lmms_eval_tasks.judges.rule_judge import RuleJudge


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_judge_env(monkeypatch, tmp_path / "cache_root")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://localhost:8000/v1", "http://localhost:8000/v1"),
        ("http://localhost:8000/v1/", "http://localhost:8000/v1"),
        ("https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1"),
        ("http://127.0.0.1:11434/v1/chat/completions/", "http://127.0.0.1:11434/v1"),
    ],
)
def test_base_url_and_full_chat_completions_url_are_both_accepted(url: str, expected: str) -> None:
    assert normalise_base_url(url) == expected


def test_auto_without_endpoint_falls_back_to_rule_judge_loudly(warnings_logged) -> None:
    judge = get_judge(task="contextual")
    assert isinstance(judge, RuleJudge) and judge.kind == "rule" and judge.model == "rule-based"
    assert judge.describe()["selected_because"] == "auto: no endpoint configured"
    assert any("OFFLINE RULE-BASED" in message and "contextual" in message for message in warnings_logged)


def test_explicit_rule_judge_does_not_warn_and_openai_without_endpoint_raises(warnings_logged) -> None:
    assert get_judge("rule").describe()["selected_because"] == "requested"
    assert warnings_logged == []
    with pytest.raises(ValueError, match="needs an endpoint"):
        get_judge("openai")
    with pytest.raises(ValueError, match="judge kind must be one of"):
        get_judge("gpt")


def test_kind_from_env_and_per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-000000")
    assert get_judge().kind == "openai"
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    assert get_judge().kind == "rule"
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_KIND_DARE", "openai")
    assert get_judge(task="dare").kind == "openai"
    assert get_judge("openai", task="hallusionbench").kind == "openai"  # explicit wins


def test_model_and_repeats_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-000000")
    assert get_judge().model == DEFAULT_MODEL and get_judge().repeats == 1
    monkeypatch.setenv("MODEL_VERSION", "gpt-4-0613")  # the host's judge-model variable
    assert get_judge().model == "gpt-4-0613"
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL", "gpt-4o-mini-2024-07-18")
    assert get_judge().model == "gpt-4o-mini-2024-07-18"
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MODEL_HALLUSIONBENCH", "gpt-4-turbo-2024-04-09")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_REPEATS_HALLUSIONBENCH", "3")
    judge = get_judge(task="hallusionbench")
    assert (judge.model, judge.repeats) == ("gpt-4-turbo-2024-04-09", 3)
    assert get_judge(task="contextual").model == "gpt-4o-mini-2024-07-18"
    judge = get_judge(task="hallusionbench", model="explicit-model", repeats=5)
    assert (judge.model, judge.repeats) == ("explicit-model", 5)


def test_numeric_settings_from_env_are_validated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-000000")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CONCURRENCY", "3")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_TIMEOUT", "12.5")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_TOKENS", "64")
    described = get_judge().describe()
    assert (described["concurrency"], described["timeout_seconds"], described["max_tokens"]) == (3, 12.5, 64)
    assert described["temperature"] == 0.0
    assert get_judge(concurrency=7).concurrency == 7
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CONCURRENCY", "many")
    with pytest.raises(ValueError, match="LMMS_EVAL_TASKS_JUDGE_CONCURRENCY: expected a number"):
        get_judge()
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CONCURRENCY", "0")
    with pytest.raises(ValueError, match="must be >= 1"):
        get_judge()
    with pytest.raises(TypeError, match="unknown overrides \\['concurency'\\]"):
        get_judge("rule", concurency=3)


def test_cache_location_defaults_and_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-000000")
    assert get_judge().cache_path == tmp_path / "cache_root" / "judge" / "judge_cache.sqlite"
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "elsewhere.sqlite"))
    assert get_judge().cache_path == tmp_path / "elsewhere.sqlite"
    assert get_judge(cache_path=tmp_path / "x.sqlite").cache_path == tmp_path / "x.sqlite"
    assert get_judge(cache=False).cache_path is None
    monkeypatch.delenv("LMMS_EVAL_TASKS_CACHE")
    monkeypatch.delenv("LMMS_EVAL_TASKS_JUDGE_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert (
        get_judge().cache_path
        == tmp_path / "home" / ".cache" / "lmms_eval_tasks" / "judge" / "judge_cache.sqlite"
    )


def test_keyless_local_server_via_url_only(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(lambda prompt: "Judgement: Yes") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        judge = get_judge(model="llama-3.1-8b-instruct", cache=False)
        assert isinstance(judge, OpenAIJudge)
        assert judge.judge([JudgeRequest("p")])[0][0].text == "Judgement: Yes"
        assert judge.describe()["endpoint"] == server.base_url
        assert judge.describe()["endpoint_configured_by"] == "OPENAI_BASE_URL"


def test_azure_variables_select_azure_and_use_the_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(lambda prompt: "correct") as server:
        root = server.base_url.removesuffix("/v1")
        monkeypatch.setenv("AZURE_ENDPOINT", root)
        monkeypatch.setenv("AZURE_API_KEY", "azure-test-key-123456")
        monkeypatch.setenv("DEPLOYMENT_NAME", "my-gpt4o-deployment")
        judge = get_judge(cache=False)
        assert judge.describe()["api_type"] == "azure" and judge.model == "my-gpt4o-deployment"
        assert judge.judge([JudgeRequest("p")])[0][0].text == "correct"
        call = server.calls[0]
        assert call.headers["api-key"] == "azure-test-key-123456"
        assert call.body["model"] == "my-gpt4o-deployment"
        assert call.path.startswith("/openai/deployments/my-gpt4o-deployment/chat/completions?api-version=")
        assert "azure-test-key" not in str(judge.describe())


def test_azure_full_deployment_url_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("API_TYPE", "azure")
    monkeypatch.setenv(
        "AZURE_ENDPOINT",
        "https://myres.openai.azure.com/openai/deployments/gpt4-judge/chat/completions?api-version=2024-06-01",
    )
    monkeypatch.setenv("AZURE_API_KEY", "azure-test-key-123456")
    endpoint = resolve_endpoint()
    assert (endpoint.api_type, endpoint.base_url, endpoint.deployment, endpoint.api_version) == (
        "azure",
        "https://myres.openai.azure.com",
        "gpt4-judge",
        "2024-06-01",
    )
    assert "azure-test-key" not in repr(endpoint)
    assert get_judge().model == "gpt4-judge"
    monkeypatch.delenv("AZURE_API_KEY")
    with pytest.raises(ValueError, match="AZURE_API_KEY"):
        resolve_endpoint()


def test_openai_variables_win_over_azure_unless_api_type_says_azure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-000000")
    monkeypatch.setenv("AZURE_ENDPOINT", "https://myres.openai.azure.com")
    monkeypatch.setenv("AZURE_API_KEY", "azure-test-key-123456")
    assert resolve_endpoint().api_type == "openai"
    monkeypatch.setenv("API_TYPE", "azure")
    assert resolve_endpoint().api_type == "azure"
    monkeypatch.setenv("API_TYPE", "bedrock")
    with pytest.raises(ValueError, match="API_TYPE must be"):
        resolve_endpoint()
