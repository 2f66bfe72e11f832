"""Checks before a run on a model server: the server answers, the judge is not the model under test (one
``OPENAI_API_BASE`` can point both at one server), and no task needs log-likelihoods."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from lmms_eval_tasks.host.argv import flag_value, parse_model_args, task_names

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


def model_endpoint(model_args: str | None) -> tuple[str, str]:
    """(base URL, model name) the host's OpenAI-compatible model will use with these ``--model_args``."""
    args = parse_model_args(model_args)
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
    addresses = _addresses(host, port)
    if host == "localhost" or any(_is_this_machine(address) for address in addresses):
        addresses = ("this machine",)
    return scheme, addresses, port, parts.path.rstrip("/")


def _addresses(host: str, port: int) -> tuple[str, ...]:
    try:
        return tuple(sorted({str(info[4][0]).split("%")[0] for info in socket.getaddrinfo(host, port)}))
    except (OSError, UnicodeError):
        return (host,)


def _is_this_machine(address: str) -> bool:
    """A loopback (127.x, ::1) or unspecified (0.0.0.0, ::, where a server bound to every interface answers)
    address, or one of the addresses of this machine's own name."""
    import ipaddress

    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    if parsed.is_loopback or parsed.is_unspecified:
        return True
    return address in _addresses(socket.gethostname(), 0)


def _judged_tasks(argv: Sequence[str]) -> list[str]:
    from lmms_eval_tasks.framework.registry import benchmark_for_task

    return [
        name
        for name in task_names(argv)
        if (benchmark := benchmark_for_task(name)) is not None and benchmark.paper_judge_model is not None
    ]


def check_judge_endpoint(argv: Sequence[str]) -> str | None:
    """None unless a judged task's judge would be the server model under test; then the one-line refusal."""
    from lmms_eval_tasks import environment

    model = flag_value(argv, "--model") or ""
    if model not in SERVER_MODELS or environment.flag(ALLOW_ENV):
        return None
    judged = _judged_tasks(argv)
    if not judged:
        return None
    from lmms_eval_tasks.judges.config import resolve_endpoint
    from lmms_eval_tasks.judges.factory import judge_identity

    model_url, model_name = model_endpoint(flag_value(argv, "--model_args"))
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


# --- log-likelihood tasks on a server ---------------------------------------------------------------------

LOGLIKELIHOOD_TYPES = ("loglikelihood", "multiple_choice")
IN_PROCESS_WRAPPERS = "llava_hf, llava (the pack's llava_transformers) or random_guess"


def loglikelihood_tasks(names: Sequence[str]) -> list[str]:
    """The pack tasks ``names`` runs (groups and tags expanded) whose output type needs log-likelihoods."""
    from lmms_eval_tasks.framework.task_index import leaf_tasks, task_config, task_entry

    return [
        name
        for name in leaf_tasks(list(names))
        if task_config(task_entry(name)).get("output_type") in LOGLIKELIHOOD_TYPES  # type: ignore[arg-type]
    ]


def check_loglikelihood_on_server(argv: Sequence[str]) -> str | None:
    """None unless a server model is asked for tasks that need log-likelihoods; then the one-line refusal."""
    model = flag_value(argv, "--model") or ""
    if model not in SERVER_MODELS:
        return None
    needing = loglikelihood_tasks(task_names(argv))
    if not needing:
        return None
    shown = ", ".join(needing[:3]) + (f" and {len(needing) - 3} more" if len(needing) > 3 else "")
    return (
        f"lmms_eval: {shown} need log-likelihoods (DARE's Out-Log scores each option's probability), which "
        f"--model {model} cannot give: a chat-completions server returns text only; fix: run these tasks "
        f"with a wrapper that computes them in-process ({IN_PROCESS_WRAPPERS}), or leave them out "
        "(dare_sample_gen, dare_gen)"
    )


# --- the model server answers -------------------------------------------------------------------------------

PREFLIGHT_TIMEOUT_S = 10.0


def check_model_server(argv: Sequence[str]) -> str | None:
    """None unless the endpoint of a server ``--model`` does not answer one cheap request (``GET /models``;
    any HTTP status is an answer); then one line naming the URL (redacted), before any document."""
    model = flag_value(argv, "--model") or ""
    if model not in SERVER_MODELS:
        return None
    import httpx2

    from lmms_eval_tasks.judges.redact import safe_url

    url, _ = model_endpoint(flag_value(argv, "--model_args"))
    try:
        httpx2.get(url.rstrip("/") + "/models", timeout=PREFLIGHT_TIMEOUT_S)
    except httpx2.HTTPError as error:
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:200]
        return (
            f"lmms_eval: the model server {safe_url(url)} does not answer ({reason}; one GET /models, "
            f"{PREFLIGHT_TIMEOUT_S:g} s); fix: start the server, or correct --model_args base_url "
            "(or OPENAI_API_BASE)"
        )
    return None
