"""Judge configuration: the argument, else ``LMMS_EVAL_TASKS_JUDGE_<SETTING>_<TASK>``, the same without
``_<TASK>``, the host lmms-eval's variable (``MODEL_VERSION`` for the model), the default."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit, urlunsplit

from lmms_eval_tasks import environment
from lmms_eval_tasks.environment import judge_setting

ENV_PREFIX = "LMMS_EVAL_TASKS_JUDGE"
DEFAULT_MODEL = "gpt-4o-2024-11-20"  # the host's default judge (MODEL_VERSION); pinned snapshot name
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AZURE_API_VERSION = "2024-02-15-preview"  # the host's default API_VERSION
DEFAULTS: dict[str, float | int] = {
    "repeats": 1,
    "concurrency": 16,
    "timeout": 60.0,
    "max_retries": 6,
    "max_tokens": 1024,
    "temperature": 0.0,
    "backoff_base": 1.0,
    "backoff_max": 60.0,
    "circuit_breaker": 20,
    # the whole judging phase of one batch, in seconds; 0 = automatic: 120 s + 1 s per reply to fetch
    "total_timeout": 0.0,
    # warn when more than this share of a batch's items miss a verdict (0.05 = 5 %)
    "max_unjudged": 0.05,
}
TOTAL_TIMEOUT_BASE_SECONDS = 120.0
TOTAL_TIMEOUT_PER_REPLY_SECONDS = 1.0
_INT_SETTINGS = {"repeats", "concurrency", "max_retries", "max_tokens", "circuit_breaker"}


def numeric_setting(name: str, explicit: float | int | None, task: str | None) -> float | int:
    """A numeric setting: explicit value, else env (per task, then global), else the default; validated."""
    if explicit is not None:
        value: float | int = explicit
        source = f"argument {name}"
    else:
        raw = judge_setting(name, task)
        source = f"{ENV_PREFIX}_{name.upper()}"
        if raw is None:
            return DEFAULTS[name]
        try:
            value = int(raw) if name in _INT_SETTINGS else float(raw)
        except ValueError:
            raise ValueError(f"{source}: expected a number, got {raw!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{source}: expected a number, got {value!r}")
    if name in _INT_SETTINGS and not float(value).is_integer():
        raise ValueError(f"{source}: expected an integer, got {value!r}")
    minimum = 1 if name in {"repeats", "concurrency", "max_tokens"} else 0
    if value != value or value < minimum:  # NaN fails too
        raise ValueError(f"{source}: must be >= {minimum}, got {value!r}")
    if name == "max_unjudged" and value > 1:
        raise ValueError(f"{source}: a share between 0 and 1 (0.05 = 5 %), got {value!r}")
    return int(value) if name in _INT_SETTINGS else float(value)


def total_timeout_seconds(setting: float, replies: int) -> float:
    """The judging phase's deadline: the setting, or (0 = automatic) 120 s + 1 s per reply to fetch."""
    if setting > 0:
        return float(setting)
    return TOTAL_TIMEOUT_BASE_SECONDS + TOTAL_TIMEOUT_PER_REPLY_SECONDS * replies


def default_cache_path() -> Path:
    """``$LMMS_EVAL_TASKS_JUDGE_CACHE`` or ``$LMMS_EVAL_TASKS_CACHE/judge/judge_cache.sqlite``."""
    explicit = environment.value(f"{ENV_PREFIX}_CACHE")
    if explicit:
        path = Path(explicit).expanduser()
        return path / "judge_cache.sqlite" if path.suffix == "" or path.is_dir() else path
    from lmms_eval_tasks import cache_root

    return cache_root() / "judge" / "judge_cache.sqlite"


def normalise_base_url(url: str) -> str:
    """Accept a base URL (``http://host:8000/v1``) or a full ``.../chat/completions`` URL; return the base."""
    url = url.strip()
    parts = urlsplit(url)
    path = re.sub(r"/+$", "", parts.path)
    path = re.sub(r"/chat/completions$", "", path)
    path = re.sub(r"/completions$", "", path)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@dataclass(frozen=True)
class Endpoint:
    """Where the OpenAI-compatible judge lives; ``api_key`` is kept out of repr and describe()."""

    api_type: str  # "openai" or "azure"
    base_url: str
    api_key: str = field(repr=False)
    api_version: str | None = None
    deployment: str | None = None  # Azure deployment taken from a full deployment URL, if any
    source: str = ""  # which variables configured it (names only)


def _first_env(*names: str) -> tuple[str | None, str | None]:
    """The first set variable of ``names`` (the pack's through ``environment``, the host's directly)."""
    for name in names:
        value = environment.value(name) if name.startswith(environment.PREFIX) else os.environ.get(name)
        if value:
            return value, name
    return None, None


def _azure_endpoint(api_key: str | None, key_name: str | None) -> Endpoint | None:
    url, url_name = _first_env("AZURE_OPENAI_ENDPOINT", "AZURE_ENDPOINT")
    if not url and not api_key:
        return None
    if not url or not api_key:
        missing = (
            "AZURE_ENDPOINT / AZURE_OPENAI_ENDPOINT" if not url else "AZURE_API_KEY / AZURE_OPENAI_API_KEY"
        )
        raise ValueError(f"Azure judge selected but {missing} is not set")
    version, _ = _first_env("AZURE_API_VERSION", "API_VERSION", "OPENAI_API_VERSION")
    deployment = None
    parts = urlsplit(url)
    # host Azure tasks use a full ".../openai/deployments/<name>/chat/completions?api-version=..." URL
    match = re.search(r"/openai/deployments/([^/]+)", parts.path)
    if match:
        deployment = match.group(1)
        version = version or parse_qs(parts.query).get("api-version", [None])[0]
        url = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return Endpoint(
        api_type="azure",
        base_url=url.rstrip("/"),
        api_key=api_key,
        api_version=version or DEFAULT_AZURE_API_VERSION,
        deployment=deployment,
        source=f"{url_name} + {key_name}",
    )


def resolve_endpoint(
    base_url: str | None = None, api_key: str | None = None, api_type: str | None = None
) -> Endpoint | None:
    """The configured endpoint (OpenAI-compatible or Azure: the variables of docs/judges.md, "Configuration"),
    or None when nothing is configured (then "auto" falls back to the rule judge)."""
    api_type = (
        api_type or judge_setting("api_type") or os.environ.get("API_TYPE") or ""
    ).strip().lower() or None
    if api_type not in (None, "openai", "azure"):
        raise ValueError(f"API_TYPE must be 'openai' or 'azure', got {api_type!r}")
    azure_key, azure_key_name = _first_env("AZURE_API_KEY", "AZURE_OPENAI_API_KEY")
    env_url, url_name = _first_env(
        f"{ENV_PREFIX}_BASE_URL", "OPENAI_API_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE"
    )
    env_key, key_name = _first_env(f"{ENV_PREFIX}_API_KEY", "OPENAI_API_KEY")
    if api_type == "azure":
        if base_url:
            version, _ = _first_env("AZURE_API_VERSION", "API_VERSION", "OPENAI_API_VERSION")
            return Endpoint(
                "azure",
                base_url.rstrip("/"),
                api_key or azure_key or "",
                version or DEFAULT_AZURE_API_VERSION,
                None,
                "argument base_url",
            )
        endpoint = _azure_endpoint(api_key or azure_key, "argument api_key" if api_key else azure_key_name)
        if endpoint is None:
            raise ValueError("API_TYPE=azure but AZURE_ENDPOINT / AZURE_API_KEY are not set")
        return endpoint
    if api_type is None and not (base_url or api_key or env_url or env_key):
        # like the host (API_TYPE defaults to openai), Azure variables count only when no OpenAI ones are set
        endpoint = _azure_endpoint(azure_key, azure_key_name)
        if endpoint is not None:
            return endpoint
    url = base_url or env_url
    key = api_key or env_key
    if not url and not key:
        return None
    sources = ("argument base_url" if base_url else url_name, "argument api_key" if api_key else key_name)
    return Endpoint(
        api_type="openai",
        base_url=normalise_base_url(url) if url else DEFAULT_OPENAI_BASE_URL,
        # keyless local servers (vLLM, Ollama, LM Studio) accept any token; the client requires one
        api_key=key or "no-key",
        source=" + ".join(filter(None, sources)),
    )
