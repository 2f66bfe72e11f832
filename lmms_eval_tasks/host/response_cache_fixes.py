"""Six host patches to lmms-eval's response cache (``--use_cache DIR``) for long runs on model servers.

``cache_no_failures``: lmms-eval 0.7.3 stores a failed request's marker text
(``[LMMS_EVAL_REQUEST_FAILED after N retries] ...``) like an answer, so the rerun after an outage replays
the failures without asking the server. The patch makes such a response invalid (never stored), writes it
to the audit log without a cache key (the log's crash replay skips it) and treats one already cached by an
older run as a miss (asked again).

``cache_checkpoints``: lmms-eval 0.7.3 stores responses only when the model returns the whole
request-type phase (one call for every ``generate_until`` request of every task), so a run killed at 99%
has cached nothing. The patch hands the model the cache misses in slices of the cache's checkpoint interval
(``LMMS_CACHE_CHECKPOINT_INTERVAL``, default 256) and stores each slice's answers when it returns: a killed
run loses at most one slice. The launcher also fixes the cache's run id (``host/resume.py``), so the rerun
reads the killed run's answers.

``cache_version``: lmms-eval 0.7.3 puts its own version into every cache key, taken from ``git describe`` run
in the folder above the installed ``lmms_eval`` package. When lmms-eval is installed in a virtual environment
inside some other git repository (``project/.venv``, the usual layout), that is the *project's* commit: every
commit to the project, or a checkout of another branch, silently changes every key, and a rerun asks the
server for everything again. The patch keys such an install by the installed lmms-eval distribution
version (what the host itself uses when it finds no git repository); an lmms-eval source checkout keeps
its commit.

``cache_no_secrets``: lmms-eval 0.7.3 writes the model and its ``--model_args`` verbatim into the meta table
of every cache database (``api_key=sk-...``, ``base_url=http://user:password@host``), where they outlive the
run in ``cache.db`` and each run's store. The patch writes them scrubbed (``judges.redact.scrub``); the cache
keys still hash the arguments as given, so answers cached before the patch are still found.

``cache_pack_version``: lmms-eval 0.7.3 keys an answer by the task's YAML configuration, its text prompt, the
model and its arguments, but not by the images or the code that makes the request: a pack upgrade that
changes how a task's images are made (VRB's corruptions) or its messages would silently reuse the answers to
the old requests. The patch adds the pack's version to the cache's version part of every key (a release
upgrade asks again; commits of a development install keep their keys, as with ``cache_version``).

``cache_request_settings``: lmms-eval 0.7.3 keys an answer by some generation settings only
(``CACHE_RELEVANT_KEYS``): ``presence_penalty``, ``frequency_penalty`` and ``seed``, which its
OpenAI-compatible clients send, are left out, and so is the image encoding they read from
``LMMS_IMAGE_ENCODE_FORMAT`` / ``LMMS_IMAGE_JPEG_QUALITY``. A rerun that changes one of them reused the
answers to the other requests. The patch keys the three settings (when a request has them: other keys are
unchanged) and adds a non-default image encoding to the version part of the keys.

The probes of ``cache_no_failures``, ``cache_checkpoints`` and ``cache_no_secrets`` exercise the host's own
code on a throw-away cache in a temporary folder; each probe says APPLIES only while the bug is there.
"""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from lmms_eval_tasks.framework.failed_generations import failure_of

_MARK = "_lmms_eval_tasks_cache_fix"
_PROBE_MARKER = "[LMMS_EVAL_REQUEST_FAILED after 2 retries] Connection error."
APPLIES, NOT_NEEDED, MISMATCH = "applies", "not needed", "mismatch"


def _response_cache_class() -> Any:
    from lmms_eval.caching.response_cache import ResponseCache

    return ResponseCache


def _original(method: Any) -> Any:
    """The host's function under the pack's wrapper (the probes judge the host's own behaviour)."""
    while getattr(method, _MARK, False):
        method = method.__wrapped__
    return method


def _marked(wrapper: Any, wrapped: Any) -> Any:
    functools.update_wrapper(wrapper, wrapped)
    setattr(wrapper, _MARK, True)
    return wrapper


def _probe_instance(doc_id: int) -> Any:
    from lmms_eval.api.instance import Instance

    arguments = (
        f"probe question {doc_id}",
        {"temperature": 0, "max_new_tokens": 4},
        None,
        doc_id,
        "probe",
        "x",
    )
    return Instance("generate_until", arguments, 0, {"task": "probe", "doc_id": doc_id, "repeats": 1})


def _scratch_cache(folder: str) -> Any:
    cache_class = _response_cache_class()
    return cache_class(db_path=str(Path(folder) / "probe.db"), audit_path=str(Path(folder) / "probe.jsonl"))


# --- cache_no_failures ---------------------------------------------------------------------------


def probe_no_failures() -> tuple[str, str]:
    """APPLIES while the host caches a failure marker as an answer."""
    cache_class = _response_cache_class()
    for name in ("_is_valid_response", "_lookup", "_log_to_audit", "execute"):
        if not callable(getattr(cache_class, name, None)):
            return MISMATCH, f"ResponseCache.{name} is gone"

    if _original(cache_class._is_valid_response)(_PROBE_MARKER, "generate_until"):
        return APPLIES, "the host caches a failed request's marker as an answer: failures are kept out"
    return NOT_NEEDED, "the host no longer caches failure markers"


def install_no_failures() -> None:
    cache_class = _response_cache_class()
    if getattr(cache_class._is_valid_response, _MARK, False):
        return
    is_valid, lookup, log_to_audit = (
        cache_class._is_valid_response,
        cache_class._lookup,
        cache_class._log_to_audit,
    )

    def _is_valid_response(response: Any, request_type: str) -> bool:
        if request_type != "loglikelihood" and failure_of(response) is not None:
            return False
        return is_valid(response, request_type)

    def _lookup(self: Any, cache_key: str) -> Any:
        cached = lookup(self, cache_key)
        if isinstance(cached, str) and failure_of(cached) is not None:
            return None  # a failure cached by an unpatched run: ask again
        return cached

    def _log_to_audit(self: Any, request_type: str, *args: Any, **kwargs: Any) -> None:
        response = args[4] if len(args) > 4 else kwargs.get("response")
        if request_type != "loglikelihood" and failure_of(response) is not None:
            kwargs.update(cache_key="", deterministic=False)  # logged, never replayed into the cache
        return log_to_audit(self, request_type, *args, **kwargs)

    cache_class._is_valid_response = staticmethod(_marked(_is_valid_response, is_valid))
    cache_class._lookup = _marked(_lookup, lookup)
    cache_class._log_to_audit = _marked(_log_to_audit, log_to_audit)


# --- cache_checkpoints ---------------------------------------------------------------------------


def _interval(cache: Any) -> int:
    from lmms_eval.caching import response_cache

    value = getattr(cache, "_checkpoint_interval", None)
    if not isinstance(value, int) or value < 1:
        value = response_cache._get_env_int(
            response_cache._CHECKPOINT_INTERVAL_ENV, response_cache._CHECKPOINT_INTERVAL
        )
    return max(1, int(value))


def probe_checkpoints() -> tuple[str, str]:
    """APPLIES while the host stores nothing until the model has answered every request of a phase."""
    cache_class = _response_cache_class()
    from lmms_eval.caching import response_cache

    for name in ("_CHECKPOINT_INTERVAL", "_CHECKPOINT_INTERVAL_ENV", "_get_env_int"):
        if not hasattr(response_cache, name):
            return MISMATCH, f"lmms_eval.caching.response_cache.{name} is gone"
    calls: list[int] = []

    class CountingModel:
        def generate_until(self, requests: list[Any]) -> list[str]:
            calls.append(len(requests))
            return [f"answer {request.doc_id}" for request in requests]

    with tempfile.TemporaryDirectory(prefix="lmms-eval-tasks-probe-") as folder:
        cache = _scratch_cache(folder)
        cache._checkpoint_interval = 1
        try:
            requests = [_probe_instance(doc_id) for doc_id in range(3)]
            answers = _original(cache_class.execute)(cache, CountingModel(), "generate_until", requests)
        finally:
            cache.close()
    if [str(answer) for answer in answers] != [f"answer {doc_id}" for doc_id in range(3)]:
        return MISMATCH, "ResponseCache.execute no longer returns the model's answers in request order"
    if calls == [3]:
        return APPLIES, "the host stores answers only after a whole phase: stored every checkpoint interval"
    return NOT_NEEDED, f"the host already hands the model slices ({calls})"


def install_checkpoints() -> None:
    cache_class = _response_cache_class()
    if getattr(cache_class.execute, _MARK, False):
        return
    execute = cache_class.execute

    def sliced_execute(self: Any, lm: Any, reqtype: str, requests: list[Any]) -> list:
        size = _interval(self)
        if len(requests) <= size:
            return execute(self, lm, reqtype, requests)
        results: list = []
        for start in range(0, len(requests), size):  # each slice's answers are stored when it returns
            results.extend(execute(self, lm, reqtype, requests[start : start + size]))
        return results

    cache_class.execute = _marked(sliced_execute, execute)


# --- cache_version -------------------------------------------------------------------------------


def _foreign_repository() -> str | None:
    """The top folder of the git repository ``git describe`` would see from the installed lmms-eval when that
    repository is not lmms-eval's own source checkout (lmms-eval installed into another project's venv)."""
    from lmms_eval import utils

    package_root = Path(utils._lmms_eval_repo_root()).resolve()
    try:
        top = subprocess.run(
            ["git", "-C", str(package_root), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if not top or Path(top).resolve() == package_root:
        return None
    return top


def _installed_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("lmms-eval")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def probe_version() -> tuple[str, str]:
    """APPLIES while the cache keys of an installed lmms-eval carry the commit of the repository around it."""
    from lmms_eval import utils

    for name in ("get_lmms_eval_cache_version", "_lmms_eval_repo_root"):
        if not callable(getattr(utils, name, None)):
            return MISMATCH, f"lmms_eval.utils.{name} is gone"
    repository = _foreign_repository()
    if repository is None:
        return NOT_NEEDED, "lmms-eval is not inside another git repository: its cache keys are stable"
    if _original(utils.get_lmms_eval_cache_version)() == _installed_version():
        return NOT_NEEDED, "the host keys its cache by the installed version"
    return APPLIES, (
        f"the host keys its cache by the commit of {repository} (around the installed lmms-eval): "
        "keyed by the installed lmms-eval version"
    )


def install_version() -> None:
    from lmms_eval import utils

    if getattr(utils.get_lmms_eval_cache_version, _MARK, False):
        return
    cache_version = utils.get_lmms_eval_cache_version

    def get_lmms_eval_cache_version() -> str:
        if _foreign_repository() is not None:
            return _installed_version()
        return cache_version()

    utils.get_lmms_eval_cache_version = _marked(get_lmms_eval_cache_version, cache_version)


# --- cache_no_secrets ----------------------------------------------------------------------------

_PROBE_SECRET = "sk-lmms-eval-tasks-probe-0123456789"


def probe_no_secrets() -> tuple[str, str]:
    """APPLIES while the host writes the model fingerprint (its arguments, keys included) into the cache."""
    import sqlite3

    cache_class = _response_cache_class()
    with tempfile.TemporaryDirectory(prefix="lmms-eval-tasks-probe-") as folder:
        database, audit = Path(folder) / "probe.db", Path(folder) / "probe.jsonl"
        try:
            cache = cache_class.__new__(cache_class)
            _original(cache_class.__init__)(
                cache, str(database), str(audit), model_fingerprint=f'probe|{{"api_key":"{_PROBE_SECRET}"}}'
            )
            cache.close()
        except TypeError as error:
            return MISMATCH, f"ResponseCache(db_path, audit_path, model_fingerprint=...) fails: {error}"
        with sqlite3.connect(database) as connection:
            stored = " ".join(str(row) for row in connection.execute("SELECT * FROM meta"))
    if _PROBE_SECRET in stored:
        return APPLIES, "the host writes --model_args (api_key included) into the cache: written scrubbed"
    return NOT_NEEDED, "the host no longer writes the model arguments' secrets into the cache"


def install_no_secrets() -> None:
    from lmms_eval.caching import response_cache

    from lmms_eval_tasks.judges.redact import scrub

    cache_class = _response_cache_class()
    if getattr(cache_class.__init__, _MARK, False):
        return
    init = cache_class.__init__

    def __init__(  # noqa: N807 - the host's method name
        self: Any, db_path: str, audit_path: str, model_fingerprint: str = "", *args: Any, **kw: Any
    ) -> None:
        shown = scrub(model_fingerprint) if model_fingerprint else ""
        init(self, db_path, audit_path, shown, *args, **kw)
        self._model_fingerprint_hash = response_cache._short_hash(model_fingerprint)  # the keys as before

    cache_class.__init__ = _marked(__init__, init)


# --- cache_pack_version --------------------------------------------------------------------------


def _pack_version() -> str:
    import lmms_eval_tasks

    return f"lmms-eval-tasks-{lmms_eval_tasks.__version__}"


def probe_pack_version() -> tuple[str, str]:
    """APPLIES while a cache the host creates keys its answers without the pack's version."""
    import inspect
    import os

    from lmms_eval.caching import response_cache

    cache_class = _response_cache_class()
    if "eval_version" not in inspect.signature(response_cache.compute_cache_key).parameters:
        return MISMATCH, "compute_cache_key no longer takes eval_version"
    with tempfile.TemporaryDirectory(prefix="lmms-eval-tasks-probe-") as folder:
        saved = os.environ.get("LMMS_CACHE_RUN_ID")
        os.environ["LMMS_CACHE_RUN_ID"] = "probe"
        try:
            host_create = _original(cache_class.__dict__["create"].__func__)
            cache = host_create(cache_class, folder, model="probe")
            version = getattr(cache, "_eval_version", None)
            cache.close()
        finally:
            if saved is None:
                os.environ.pop("LMMS_CACHE_RUN_ID", None)
            else:
                os.environ["LMMS_CACHE_RUN_ID"] = saved
    if not isinstance(version, str):
        return MISMATCH, "ResponseCache.create no longer sets _eval_version"
    if "lmms-eval-tasks" in version:
        return NOT_NEEDED, "the host's keys already carry the pack's version"
    return APPLIES, "the host's keys ignore the pack's version (images are not in them): the version is added"


def install_pack_version() -> None:
    cache_class = _response_cache_class()
    create = cache_class.__dict__["create"]
    if _wraps_with(create.__func__, _PACK_VERSION_MARK):
        return
    inner = create.__func__

    def with_pack_version(cls: Any, *args: Any, **kwargs: Any) -> Any:
        cache = inner(cls, *args, **kwargs)
        cache._eval_version = f"{cache._eval_version}+{_pack_version()}"
        return cache

    wrapper = _marked(with_pack_version, inner)
    setattr(wrapper, _PACK_VERSION_MARK, True)
    cache_class.create = classmethod(wrapper)


_PACK_VERSION_MARK = "_lmms_eval_tasks_pack_version_fix"


def _wraps_with(function: Any, attribute: str) -> bool:
    """Whether one of the pack's wrappers around ``function`` carries ``attribute`` (two patches wrap
    ``ResponseCache.create``: each installs once, in either order)."""
    while function is not None:
        if getattr(function, attribute, False):
            return True
        function = getattr(function, "__wrapped__", None) if getattr(function, _MARK, False) else None
    return False


# --- cache_request_settings ----------------------------------------------------------------------

SENT_SETTINGS = frozenset({"presence_penalty", "frequency_penalty", "seed"})
IMAGE_FORMAT_ENV = "LMMS_IMAGE_ENCODE_FORMAT"  # the host's variables (lmms_eval.protocol)
JPEG_QUALITY_ENV = "LMMS_IMAGE_JPEG_QUALITY"


def _image_encoding() -> str:
    """The image encoding the host's OpenAI-compatible clients use, "" for their default (PNG)."""
    import os

    image_format = os.environ.get(IMAGE_FORMAT_ENV, "PNG").upper()
    if image_format == "PNG":
        return ""
    quality = os.environ.get(JPEG_QUALITY_ENV, "85") if image_format in {"JPEG", "JPG", "WEBP"} else ""
    return f"image-{image_format}{quality}"


def probe_request_settings() -> tuple[str, str]:
    """APPLIES while the host's keys leave out a setting its OpenAI-compatible clients send."""
    from lmms_eval.caching import response_cache

    keyed = getattr(response_cache, _HOST_KEYS, getattr(response_cache, "CACHE_RELEVANT_KEYS", None))
    canonical = getattr(response_cache, "canonicalize_gen_kwargs", None)
    if not isinstance(keyed, frozenset) or not callable(canonical):
        return MISMATCH, "lmms_eval.caching.response_cache.CACHE_RELEVANT_KEYS is gone"
    left_out = sorted(SENT_SETTINGS - keyed)
    if not left_out:
        return NOT_NEEDED, "the host keys every setting its clients send"
    return APPLIES, f"the host's keys leave out {', '.join(left_out)} and the image encoding: keyed"


def install_request_settings() -> None:
    from lmms_eval.caching import response_cache

    if not hasattr(response_cache, _HOST_KEYS):  # the host's own set, for the probe
        setattr(response_cache, _HOST_KEYS, response_cache.CACHE_RELEVANT_KEYS)
    response_cache.CACHE_RELEVANT_KEYS = frozenset(response_cache.CACHE_RELEVANT_KEYS | SENT_SETTINGS)
    cache_class = _response_cache_class()
    create = cache_class.__dict__["create"]
    if _wraps_with(create.__func__, _SETTINGS_MARK):
        return
    inner = create.__func__

    def with_image_encoding(cls: Any, *args: Any, **kwargs: Any) -> Any:
        cache = inner(cls, *args, **kwargs)
        if _image_encoding():
            cache._eval_version = f"{cache._eval_version}+{_image_encoding()}"
        return cache

    wrapper = _marked(with_image_encoding, inner)
    setattr(wrapper, _SETTINGS_MARK, True)
    cache_class.create = classmethod(wrapper)


_SETTINGS_MARK = "_lmms_eval_tasks_settings_fix"
_HOST_KEYS = "_lmms_eval_tasks_host_cache_relevant_keys"
