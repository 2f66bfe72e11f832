"""The judge is never the model under test by accident.

The host's OpenAI-compatible models read ``base_url`` from ``--model_args``, else ``OPENAI_API_BASE`` (the
``openai`` client then ``OPENAI_BASE_URL``); the pack's judge reads ``LMMS_EVAL_TASKS_JUDGE_BASE_URL``, else
the same ``OPENAI_*`` variables. One setting can therefore point both at one server, and a server that
ignores model names then judges its own answers. Before generation, for runs with a judged task and a
server model, the launcher compares the two endpoints (host names resolved, so ``localhost`` and
``127.0.0.1`` are one server) and the two model names, and stops with one line when they meet, unless
``LMMS_EVAL_TASKS_JUDGE_IS_MODEL=1`` says it is on purpose.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

ALLOW_ENV = "LMMS_EVAL_TASKS_JUDGE_IS_MODEL"
SERVER_MODELS = frozenset(
    {
        "openai",
        "openai_compatible",
        "openai_compatible_chat",
        "async_openai",
        "async_openai_compatible",
        "async_openai_compatible_chat",
        "openai_pipelined",
    }
)
HOST_DEFAULT_MODEL_VERSION = "grok-2-latest"  # lmms-eval 0.7.3's default model_version for `openai`
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _flag_value(argv: Sequence[str], flag: str) -> str | None:
    value = None
    for index, argument in enumerate(argv):
        if argument == flag and index + 1 < len(argv):
            value = argv[index + 1]
        elif argument.startswith(flag + "="):
            value = argument.split("=", 1)[1]
    return value


def _model_args(text: str | None) -> dict[str, str]:
    pairs = (part.partition("=") for part in (text or "").split(",") if "=" in part)
    return {key.strip(): value.strip() for key, _, value in pairs}


def model_endpoint(model_args: str | None) -> tuple[str, str]:
    """(base URL, model name) the host's OpenAI-compatible model will use with these ``--model_args``."""
    args = _model_args(model_args)
    url = (
        args.get("base_url")
        or os.environ.get("OPENAI_API_BASE")
        or os.environ.get("OPENAI_BASE_URL")
        or OPENAI_DEFAULT_BASE_URL
    )
    return url, args.get("model_version") or args.get("model") or HOST_DEFAULT_MODEL_VERSION


def server_key(url: str) -> tuple[str, tuple[str, ...], int, str]:
    """What makes two base URLs one server: scheme, the host's addresses, port, path (no trailing /)."""
    from lmms_eval_tasks.judges.config import normalise_base_url

    parts = urlsplit(normalise_base_url(url))
    scheme = parts.scheme.lower() or "http"
    port = parts.port or (443 if scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    try:
        addresses = tuple(sorted({info[4][0] for info in socket.getaddrinfo(host, port)}))
    except (OSError, UnicodeError):
        addresses = (host,)
    if host in ("localhost", "127.0.0.1", "::1") or any(a in ("127.0.0.1", "::1") for a in addresses):
        addresses = ("loopback",)
    return scheme, addresses, port, parts.path.rstrip("/")


def _judged_tasks(argv: Sequence[str]) -> list[str]:
    from lmms_eval_tasks.framework.registry import benchmark_for_task

    names = [name.strip() for name in (_flag_value(argv, "--tasks") or "").split(",") if name.strip()]
    return [
        name
        for name in names
        if (benchmark := benchmark_for_task(name)) is not None and benchmark.paper_judge_model is not None
    ]


def check_judge_endpoint(argv: Sequence[str]) -> str | None:
    """None unless a judged task's judge would be the server model under test; then the one-line refusal."""
    from lmms_eval_tasks.host.substitution import env_flag

    model = _flag_value(argv, "--model") or ""
    if model not in SERVER_MODELS or env_flag(ALLOW_ENV):
        return None
    judged = _judged_tasks(argv)
    if not judged:
        return None
    from lmms_eval_tasks.judges.config import resolve_endpoint
    from lmms_eval_tasks.judges.factory import judge_identity

    model_url, model_name = model_endpoint(_flag_value(argv, "--model_args"))
    for task in judged:
        identity = judge_identity(task)
        if identity.get("kind") != "openai":
            continue  # the rule judge, or a judge configuration error the judge itself reports
        try:
            endpoint = resolve_endpoint()
        except ValueError:
            continue
        judge_url = endpoint.base_url if endpoint is not None else OPENAI_DEFAULT_BASE_URL
        same_server = server_key(judge_url) == server_key(model_url)
        same_name = identity.get("model") == model_name
        if same_server or same_name:
            what = "server" if same_server else "model name"
            source = f" (from {endpoint.source})" if endpoint is not None and endpoint.source else ""
            return (
                f"lmms_eval: the judge of {task} would be the model under test: its endpoint {judge_url}"
                f"{source}, model {identity.get('model')!r}, has the same {what} as --model {model} "
                f"({model_url}, model {model_name!r}); fix: give the judge its own "
                "LMMS_EVAL_TASKS_JUDGE_BASE_URL / _MODEL (or LMMS_EVAL_TASKS_JUDGE=rule), "
                f"or set {ALLOW_ENV}=1 to judge with it on purpose"
            )
    return None
