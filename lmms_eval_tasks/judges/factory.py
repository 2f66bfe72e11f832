"""``get_judge``: the pack's judge from arguments and environment (rule-based, or OpenAI-compatible);
apart from the package ``__init__`` so that ``judges.pipeline`` creates judges lazily."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import environment
from lmms_eval_tasks.environment import judge_setting
from lmms_eval_tasks.judges.base import Judge
from lmms_eval_tasks.judges.config import (
    DEFAULT_MODEL,
    ENV_PREFIX,
    Endpoint,
    default_cache_path,
    numeric_setting,
    resolve_endpoint,
)
from lmms_eval_tasks.judges.rule_judge import RuleJudge

KINDS = ("auto", "openai", "rule")
_NUMERIC_OVERRIDES = tuple(
    "concurrency timeout max_retries max_tokens temperature backoff_base backoff_max circuit_breaker "
    "total_timeout".split()
)
_OTHER_OVERRIDES = ("base_url", "api_key", "api_type", "cache", "cache_path", "cache_namespace")


def _resolve_kind(kind: str | None, task: str | None) -> str:
    if kind is None and task:
        kind = judge_setting("kind", task)
    if kind is None:
        kind = environment.value(ENV_PREFIX) or judge_setting("kind")
    kind = (kind or "auto").strip().lower()
    if kind not in KINDS:
        raise ValueError(f"judge kind must be one of {KINDS} (argument or {ENV_PREFIX}), got {kind!r}")
    return kind


def _resolve_model(model: str | None, task: str | None, endpoint: Endpoint | None) -> str:
    """The argument, else the per-task or global setting, the Azure deployment, ``MODEL_VERSION``, default."""
    deployment = None
    if endpoint is not None:
        deployment = endpoint.deployment or (
            os.environ.get("DEPLOYMENT_NAME") if endpoint.api_type == "azure" else None
        )
    return (
        model
        or judge_setting("model", task)
        or deployment
        or os.environ.get("MODEL_VERSION")  # the host lmms-eval's judge-model variable
        or DEFAULT_MODEL
    )


def get_judge(
    kind: str | None = None,
    *,
    model: str | None = None,
    repeats: int | None = None,
    task: str | None = None,
    **overrides: Any,
) -> Judge:
    """The pack's judge: "auto" (OpenAI-compatible if an endpoint is set, else rule-based), "openai", "rule";
    arguments and ``overrides`` (the ``_NUMERIC_OVERRIDES`` and ``_OTHER_OVERRIDES``) win over settings."""
    unknown = sorted(set(overrides) - set(_NUMERIC_OVERRIDES) - set(_OTHER_OVERRIDES))
    if unknown:
        raise TypeError(f"get_judge() got unknown overrides {unknown}")
    kind = _resolve_kind(kind, task)
    resolved_repeats = int(numeric_setting("repeats", repeats, task))
    if kind == "rule":
        return RuleJudge(repeats=resolved_repeats, reason="requested", task=task)
    endpoint = resolve_endpoint(*(overrides.get(name) for name in ("base_url", "api_key", "api_type")))
    if endpoint is None:
        if kind == "openai":
            raise ValueError(
                "judge kind 'openai' needs an endpoint: set OPENAI_API_KEY (and/or OPENAI_API_URL for a "
                "local server) or AZURE_ENDPOINT + AZURE_API_KEY"
            )
        logger.warning(
            f"!!! No LLM judge endpoint configured (OPENAI_API_KEY / OPENAI_API_URL / AZURE_*)"
            f"{' for task ' + task if task else ''}: using the OFFLINE RULE-BASED judge. Results are marked "
            f"judge=rule-based and are not comparable with GPT-judged numbers. Set {ENV_PREFIX}=rule to "
            f"silence this warning."
        )
        return RuleJudge(repeats=resolved_repeats, reason="auto: no endpoint configured", task=task)

    from lmms_eval_tasks.judges.openai_judge import OpenAIJudge

    numbers = {name: numeric_setting(name, overrides.get(name), task) for name in _NUMERIC_OVERRIDES}
    cache_off = str(judge_setting("cache_enabled") or "1").lower() in {"0", "false", "no", "off"}
    if overrides.get("cache", True) is False or cache_off:
        cache_path: Path | None = None
    else:
        cache_path = Path(overrides["cache_path"]) if overrides.get("cache_path") else default_cache_path()
    namespace = overrides.get("cache_namespace")
    if namespace is None:
        namespace = judge_setting("cache_namespace", task) or ""
    return OpenAIJudge(
        endpoint,
        model=_resolve_model(model, task, endpoint),
        repeats=resolved_repeats,
        cache_path=cache_path,
        cache_namespace=namespace,
        task=task,
        **numbers,
    )


def judge_identity(task: str | None = None) -> dict[str, Any]:
    """The judge this environment would use for ``task`` (kind, model, repeats or None for the protocol's;
    never a key), without a client: what a pending run records so a later ``score`` can say what changed."""
    from lmms_eval_tasks.judges.redact import scrub

    try:
        kind = _resolve_kind(None, task)
        endpoint = None if kind == "rule" else resolve_endpoint()
        repeats = int(numeric_setting("repeats", None, task)) if judge_setting("repeats", task) else None
    except ValueError as error:  # the judge itself will fail with the same message; record why
        return {"kind": None, "model": None, "repeats": None, "error": scrub(str(error))}
    if kind == "rule" or (endpoint is None and kind == "auto"):
        return {"kind": "rule", "model": None, "repeats": repeats}
    return {"kind": "openai", "model": scrub(_resolve_model(None, task, endpoint)), "repeats": repeats}


def llm_judge_unavailable(task: str | None = None) -> bool:
    """True when ``task`` would be judged by an LLM (kind auto or openai) but no endpoint is configured."""
    return _resolve_kind(None, task) != "rule" and resolve_endpoint() is None
