"""Fixes of lmms-eval 0.7.3 bugs, one host patch each, numbered as in docs/host-bugs.md (reproduction, fix,
upstream diff). Each probe runs the host's code on a tiny input: APPLIES while the bug is there."""

from __future__ import annotations

import contextlib
import functools
import numbers
import os
import tempfile
import threading
import types
import unittest.mock
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.host.patch_kit import (
    APPLIES,
    MISMATCH,
    NOT_NEEDED,
    CallView,
    Touched,
    bare,
    expect,
    expect_lookups,
    expect_parameters,
    is_marked,
    mark,
    probe_lock,
    replaces,
    unwrapped,
)
from lmms_eval_tasks.host.version import host_version

# --- 1. failures the host logs and swallows ---------------------------------------------------------------

FAILURES: list[BaseException] = []  # filled by the failure_recorder patch; the launcher reads and clears it


def probe_failure_recorder() -> tuple[str, str]:
    import lmms_eval.__main__ as host_main

    single = getattr(host_main, "cli_evaluate_single", None)
    expect_parameters("lmms_eval.__main__.cli_evaluate_single", single, ["args"])
    expect_lookups("lmms_eval.__main__.cli_evaluate", host_main.cli_evaluate, ["cli_evaluate_single"])
    return APPLIES, "cli_evaluate_single wrapped to record the exceptions the host logs and swallows"


def install_failure_recorder() -> None:
    import lmms_eval.__main__ as host_main

    @replaces(host_main, "cli_evaluate_single")
    def cli_evaluate_single(original: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(*args, **kwargs)
        except BaseException as error:  # noqa: BLE001 - recorded, then re-raised for the host to log
            if not isinstance(error, SystemExit) or error.code not in (None, 0):
                FAILURES.append(error)
            raise


# --- 2. results and samples files the host fails to write, silently -----------------------------------

# Filled by the host_outputs patch: every results/samples file the host wrote in this process, as
# (kind, path or None when the host opened no file for it, bytes before the write, samples expected).
HOST_OUTPUTS: list[tuple[str, Path | None, int, int | None]] = []
_WRITES = threading.local()  # .files: {path: size before} while a host save method runs on this thread
_WRITE_MODES = set("wax+")


class _BlockedWrite(PermissionError):
    """Stops a probe's host save at its first open for writing: a probe writes nothing, full disk or not."""


def _record_writes(event: str, arguments: tuple) -> None:
    """Audit hook: while a wrapped save method runs on this thread, note each file it opens for writing
    (with its size before), as the host itself names it. Raises only to stop a probe's write."""
    if event != "open":
        return
    try:
        files = getattr(_WRITES, "files", None)
        if files is None:
            return
        path, mode, flags = arguments
        if isinstance(path, int) or path is None:
            return
        if mode is not None:
            writing = bool(_WRITE_MODES & set(str(mode)))
        else:
            writing = bool(int(flags or 0) & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if not writing:
            return
        target = Path(os.fsdecode(path)).absolute()
        files.setdefault(target, _size(target))
    except Exception:  # noqa: BLE001, S110 - a recording failure must never break the host's write
        return
    if getattr(_WRITES, "block", False):
        raise _BlockedWrite(f"lmms-eval-tasks probe: {target} not written")


_audit_installed = False


@contextlib.contextmanager
def written_files(block: bool = False) -> Iterator[dict[Path, int]]:
    """The files the code run in this block (on this thread) opens for writing: {path: size before}.
    With ``block`` each such open fails instead (a probe's way to see the names without writing)."""
    global _audit_installed
    import sys

    with probe_lock:
        if not _audit_installed:  # an audit hook cannot be removed: one for the process, idle off-block
            sys.addaudithook(_record_writes)
            _audit_installed = True
    outer, outer_block = getattr(_WRITES, "files", None), getattr(_WRITES, "block", False)
    files: dict[Path, int] = {}
    _WRITES.files, _WRITES.block = files, block
    try:
        yield files
    finally:
        _WRITES.files, _WRITES.block = outer, outer_block
        if outer is not None:
            for path, size in files.items():
                outer.setdefault(path, size)


@contextlib.contextmanager
def _host_quiet(owner: Any) -> Iterator[None]:
    """No log lines from the host module of ``owner`` while a probe runs it (they would name probe files)."""
    module = owner.__module__
    logger.disable(module)
    try:
        yield
    finally:
        logger.enable(module)


def probe_host_outputs() -> tuple[str, str]:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    for name, expected in (
        ("save_results_aggregated", ["self", "results", "samples", "datetime_str"]),
        ("save_results_samples", ["self", "task_name", "samples"]),
    ):
        expect_parameters(f"EvaluationTracker.{name}", getattr(EvaluationTracker, name, None), expected)
    # Both save methods of a real tracker, each stopped at its first open for writing (nothing is written):
    # each must open one file, named for this run's results and the task's samples, in its output folder.
    sample = {"arguments": [["probe"]], "resps": [["a"]], "filtered_resps": ["a"], "target": "a", "doc": {}}
    folder = Path(tempfile.gettempdir()).absolute()  # exists: the host's mkdir creates nothing
    with _host_quiet(EvaluationTracker):
        tracker = EvaluationTracker(output_path=str(folder))
        tracker.general_config_tracker.model_name_sanitized = ""
        with written_files(block=True) as results_files, contextlib.suppress(_BlockedWrite):
            unwrapped(EvaluationTracker.save_results_aggregated)(tracker, {}, {}, "2020-01-01T00:00:00")
        with written_files(block=True) as samples_files, contextlib.suppress(_BlockedWrite):
            unwrapped(EvaluationTracker.save_results_samples)(tracker, "lmms_eval_tasks_probe", [sample])
    named = [*results_files, *samples_files]
    expect(
        len(results_files) == len(samples_files) == 1 and all(folder in path.parents for path in named),
        f"EvaluationTracker's save methods opened {[str(path) for path in named]} for one results and "
        f"one samples file in {folder}",
    )
    expect(
        "lmms_eval_tasks_probe" in named[1].name,
        f"EvaluationTracker.save_results_samples names its file {named[1].name} (no task name)",
    )
    return (
        APPLIES,
        "EvaluationTracker's save methods wrapped to record the files they write, as the host names them",
    )


def _size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _note_outputs(kind: str, tracker: Any, files: dict[Path, int], expected: int | None) -> None:
    """Record what one host save wrote (nothing to check when the host was given no output path)."""
    if not getattr(tracker, "output_path", None) or expected == 0:
        return
    if not files:
        HOST_OUTPUTS.append((kind, None, 0, expected))
    for path, size_before in files.items():
        HOST_OUTPUTS.append((kind, path, size_before, expected))


def install_host_outputs() -> None:
    from lmms_eval.loggers.evaluation_tracker import EvaluationTracker

    @replaces(EvaluationTracker, "save_results_aggregated")
    def save_results_aggregated(
        original: Any, self: Any, results: dict, samples: dict, datetime_str: str
    ) -> None:
        with written_files() as files:
            output = original(self, results, samples, datetime_str)
        _note_outputs("results file", self, files, None)
        return output

    @replaces(EvaluationTracker, "save_results_samples")
    def save_results_samples(original: Any, self: Any, task_name: str, samples: Any) -> None:
        with written_files() as files:
            output = original(self, task_name, samples)
        _note_outputs(f"samples file of {task_name}", self, files, len(samples))
        return output


def host_output_problems() -> list[str]:
    """One line per results/samples file the host set out to write and did not write completely
    (missing, not JSON, fewer lines than samples), naming the file; [] when all are whole."""
    import json

    problems = []
    for kind, path, offset, expected in HOST_OUTPUTS:
        if path is None:
            problems.append(
                f"the host's {kind} was not written (the host opened no file for it; its log says why)"
            )
            continue
        try:
            with open(path, "rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except OSError as error:
            problems.append(f"{path}: the host's {kind} was not written ({error.strerror or error})")
            continue
        try:
            if expected is None:
                json.loads(data.decode("utf-8"))
            else:
                lines = [line for line in data.decode("utf-8").splitlines() if line.strip()]
                for line in lines:
                    json.loads(line)
                if len(lines) != expected:
                    raise ValueError(f"{len(lines)} of {expected} samples")
        except (UnicodeDecodeError, ValueError) as error:
            reason = str(error).splitlines()[0][:120]
            problems.append(
                f"{path}: the host's {kind} is incomplete ({len(data)} bytes, {reason}): disk full?"
            )
    return problems


# --- 3. loglikelihood_result and 4. no_text_result: what unwrap_generation_output hands process_results -----


def _host_unwrap_generation_output() -> Any:
    """The host's own ``lmms_eval.evaluator.unwrap_generation_output`` (both its patches probe it)."""
    import lmms_eval.evaluator as evaluator

    current = getattr(evaluator, "unwrap_generation_output", None)
    expect_parameters("lmms_eval.evaluator.unwrap_generation_output", current, ["output"])
    return unwrapped(current)


def is_loglikelihood_result(output: Any) -> bool:
    """True for a ``(log_prob, is_greedy)`` pair as ``lmms.loglikelihood`` returns it."""
    return (
        isinstance(output, tuple | list)
        and len(output) == 2
        and isinstance(output[0], numbers.Real)
        and not isinstance(output[0], bool)
        and isinstance(output[1], bool | numbers.Integral)
    )


def probe_loglikelihood_result() -> tuple[str, str]:
    host = _host_unwrap_generation_output()
    try:
        kept, _ = host((-1.5, False))
    except Exception as error:  # noqa: BLE001 - an unexpected host behaviour is a mismatch, not a crash
        return MISMATCH, f"unwrap_generation_output((-1.5, False)) raised {type(error).__name__}: {error}"
    if isinstance(kept, tuple):
        return NOT_NEEDED, "the host keeps (log_prob, is_greedy) pairs already"
    expect(
        isinstance(kept, str),
        f"unwrap_generation_output turns a pair into {type(kept).__name__}, expected str",
    )
    return APPLIES, "the host stringifies (log_prob, is_greedy) pairs; they are kept intact"


def install_loglikelihood_result() -> None:
    import lmms_eval.evaluator as evaluator

    @replaces(evaluator, "unwrap_generation_output")
    def unwrap_generation_output(original: Any, output: Any) -> tuple[Any, Any]:
        if is_loglikelihood_result(output):
            return (float(output[0]), bool(output[1])), None
        return original(output)


def probe_no_text_result() -> tuple[str, str]:
    from lmms_eval.api.instance import GenerationResult

    host = _host_unwrap_generation_output()
    try:
        text, _ = host(GenerationResult(text=None))  # type: ignore[arg-type]
    except Exception as error:  # noqa: BLE001 - an unexpected host behaviour is a mismatch, not a crash
        name = type(error).__name__
        return MISMATCH, f"unwrap_generation_output(GenerationResult(text=None)) raised {name}"
    if text is not None:
        return NOT_NEEDED, f"the host turns a reply without text into {text!r}"
    return APPLIES, (
        'the host hands process_results "" for a reply without text (content null): a failed generation'
    )


def install_no_text_result() -> None:
    """A generation whose text is None (the server's content was null) reaches ``process_results`` as the
    pack's failure marker, not as the "" the host's ``ConfigurableTask.process_results`` would make of it."""
    import lmms_eval.evaluator as evaluator

    from lmms_eval_tasks.framework.failed_generations import NO_TEXT_MARKER

    @replaces(evaluator, "unwrap_generation_output")
    def unwrap_generation_output(original: Any, output: Any) -> tuple[Any, Any]:
        text, counts = original(output)
        return (NO_TEXT_MARKER if text is None else text), counts


# --- 5-10. cache_*: lmms-eval's response cache (--use_cache DIR) --------------------------------------------

_PROBE_MARKER = "[LMMS_EVAL_REQUEST_FAILED after 2 retries] Connection error."
_PROBE_SECRET = "sk-lmms-eval-tasks-probe-0123456789"


def _probe_request(kind: str, arguments: tuple) -> Any:
    """A host ``Instance`` of task ``probe`` (doc id ``arguments[3]``) for a probe to hand the host's code."""
    from lmms_eval.api.instance import Instance

    return Instance(kind, arguments, idx=0, metadata={"task": "probe", "doc_id": arguments[3], "repeats": 1})


def probe_cache_no_failures() -> tuple[str, str]:
    """APPLIES while the host caches a failure marker as an answer."""
    from lmms_eval.caching.response_cache import ResponseCache

    for name in ("_is_valid_response", "_lookup", "_log_to_audit", "execute"):
        expect(callable(getattr(ResponseCache, name, None)), f"ResponseCache.{name} is gone")
    if unwrapped(ResponseCache._is_valid_response)(_PROBE_MARKER, "generate_until"):
        return APPLIES, "the host caches a failed request's marker as an answer: failures are kept out"
    return NOT_NEEDED, "the host no longer caches failure markers"


def install_cache_no_failures() -> None:
    from lmms_eval.caching.response_cache import ResponseCache

    from lmms_eval_tasks.framework.failed_generations import failure_of

    @replaces(ResponseCache, "_is_valid_response")
    def _is_valid_response(original: Any, response: Any, request_type: str) -> bool:
        if request_type != "loglikelihood" and failure_of(response) is not None:
            return False
        return original(response, request_type)

    @replaces(ResponseCache, "_lookup")
    def _lookup(original: Any, self: Any, cache_key: str) -> Any:
        cached = original(self, cache_key)
        if isinstance(cached, str) and failure_of(cached) is not None:
            return None  # a failure cached by an unpatched run: ask again
        return cached

    @replaces(ResponseCache, "_log_to_audit")
    def _log_to_audit(original: Any, self: Any, request_type: str, *args: Any, **kwargs: Any) -> None:
        response = args[4] if len(args) > 4 else kwargs.get("response")
        if request_type != "loglikelihood" and failure_of(response) is not None:
            kwargs.update(cache_key="", deterministic=False)  # logged, never replayed into the cache
        return original(self, request_type, *args, **kwargs)


def probe_cache_checkpoints() -> tuple[str, str]:
    """APPLIES while the host stores nothing until the model has answered every request of a phase."""
    from lmms_eval.caching import response_cache
    from lmms_eval.caching.response_cache import ResponseCache

    for name in ("_CHECKPOINT_INTERVAL", "_CHECKPOINT_INTERVAL_ENV", "_get_env_int"):
        expect(hasattr(response_cache, name), f"lmms_eval.caching.response_cache.{name} is gone")
    calls = []

    class CountingModel:
        def generate_until(self, requests: list[Any]) -> list[str]:
            calls.append(len(requests))
            return [f"answer {request.doc_id}" for request in requests]

    with tempfile.TemporaryDirectory(prefix="lmms-eval-tasks-probe-") as folder:
        cache = ResponseCache(db_path=f"{folder}/probe.db", audit_path=f"{folder}/probe.jsonl")
        cache._checkpoint_interval = 1
        settings = {"temperature": 0, "max_new_tokens": 4}
        try:
            questions = [
                (f"probe question {doc_id}", settings, None, doc_id, "probe", "x") for doc_id in range(3)
            ]
            requests = [_probe_request("generate_until", question) for question in questions]
            answers = unwrapped(ResponseCache.execute)(cache, CountingModel(), "generate_until", requests)
        finally:
            cache.close()
    expect(
        [str(answer) for answer in answers] == [f"answer {doc_id}" for doc_id in range(3)],
        "ResponseCache.execute no longer returns the model's answers in request order",
    )
    if calls == [3]:
        return APPLIES, "the host stores answers only after a whole phase: stored every checkpoint interval"
    return NOT_NEEDED, f"the host already hands the model slices ({calls})"


def install_cache_checkpoints() -> None:
    from lmms_eval.caching import response_cache

    @replaces(response_cache.ResponseCache, "execute")
    def sliced_execute(execute: Any, self: Any, lm: Any, reqtype: str, requests: list[Any]) -> list:
        size = getattr(self, "_checkpoint_interval", None)
        if not isinstance(size, int) or size < 1:
            size = response_cache._get_env_int(
                response_cache._CHECKPOINT_INTERVAL_ENV, response_cache._CHECKPOINT_INTERVAL
            )
        size = max(1, int(size))
        if len(requests) <= size:
            return execute(self, lm, reqtype, requests)
        results: list = []
        for start in range(0, len(requests), size):  # each slice's answers are stored when it returns
            results.extend(execute(self, lm, reqtype, requests[start : start + size]))
        return results


def _foreign_repository() -> str | None:
    """The top folder of the git repository ``git describe`` would see from the installed lmms-eval when that
    repository is not lmms-eval's own source checkout (lmms-eval installed into another project's venv)."""
    import subprocess

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
    return None if not top or Path(top).resolve() == package_root else top


def probe_cache_version() -> tuple[str, str]:
    """APPLIES while the cache keys of an installed lmms-eval carry the commit of the repository around it."""
    from lmms_eval import utils

    for name in ("get_lmms_eval_cache_version", "_lmms_eval_repo_root"):
        expect(callable(getattr(utils, name, None)), f"lmms_eval.utils.{name} is gone")
    repository = _foreign_repository()
    if repository is None:
        return NOT_NEEDED, "lmms-eval is not inside another git repository: its cache keys are stable"
    if unwrapped(utils.get_lmms_eval_cache_version)() == (host_version() or "unknown"):
        return NOT_NEEDED, "the host keys its cache by the installed version"
    return APPLIES, (
        f"the host keys its cache by the commit of {repository} (around the installed lmms-eval): "
        "keyed by the installed lmms-eval version"
    )


def install_cache_version() -> None:
    from lmms_eval import utils

    @replaces(utils, "get_lmms_eval_cache_version")
    def get_lmms_eval_cache_version(cache_version: Any) -> str:
        return (host_version() or "unknown") if _foreign_repository() is not None else cache_version()


def probe_cache_no_secrets() -> tuple[str, str]:
    """APPLIES while the host writes the model fingerprint (its arguments, keys included) into the cache."""
    import sqlite3

    from lmms_eval.caching.response_cache import ResponseCache

    with tempfile.TemporaryDirectory(prefix="lmms-eval-tasks-probe-") as folder:
        database, audit = Path(folder) / "probe.db", Path(folder) / "probe.jsonl"
        try:
            cache = ResponseCache.__new__(ResponseCache)
            unwrapped(ResponseCache.__init__)(
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


def install_cache_no_secrets() -> None:
    from lmms_eval.caching import response_cache

    from lmms_eval_tasks.judges.redact import scrub

    @replaces(response_cache.ResponseCache, "__init__")
    def scrubbed_init(
        init: Any,
        self: Any,
        db_path: str,
        audit_path: str,
        model_fingerprint: str = "",
        *args: Any,
        **kw: Any,
    ) -> None:
        init(self, db_path, audit_path, scrub(model_fingerprint) if model_fingerprint else "", *args, **kw)
        self._model_fingerprint_hash = response_cache._short_hash(model_fingerprint)  # the keys as before


# The parts cache_pack_version and cache_request_settings add to the version part of every cache key,
# through one wrapper of ResponseCache.create (each part installed once, in either order).
_VERSION_PARTS: dict[str, Callable[[], str]] = {}


def _add_version_part(name: str, part: Callable[[], str]) -> None:
    from lmms_eval.caching.response_cache import ResponseCache

    _VERSION_PARTS[name] = part

    @replaces(ResponseCache, "create")
    def create_with_version_parts(create: Any, cls: Any, *args: Any, **kwargs: Any) -> Any:
        cache = create(cls, *args, **kwargs)
        for make_part in _VERSION_PARTS.values():
            if made := make_part():
                cache._eval_version = f"{cache._eval_version}+{made}"
        return cache


def probe_cache_pack_version() -> tuple[str, str]:
    """APPLIES while a cache the host creates keys its answers without the pack's version."""
    import inspect

    from lmms_eval.caching import response_cache
    from lmms_eval.caching.response_cache import ResponseCache

    parameters = inspect.signature(response_cache.compute_cache_key).parameters
    expect("eval_version" in parameters, "compute_cache_key no longer takes eval_version")
    folders = tempfile.TemporaryDirectory(prefix="lmms-eval-tasks-probe-")
    with folders as folder, unittest.mock.patch.dict(os.environ, {"LMMS_CACHE_RUN_ID": "probe"}):
        cache = unwrapped(ResponseCache.__dict__["create"].__func__)(ResponseCache, folder, model="probe")
        version = getattr(cache, "_eval_version", None)
        cache.close()
    expect(isinstance(version, str), "ResponseCache.create no longer sets _eval_version")
    if "lmms-eval-tasks" in version:
        return NOT_NEEDED, "the host's keys already carry the pack's version"
    return APPLIES, "the host's keys ignore the pack's version (images are not in them): the version is added"


def install_cache_pack_version() -> None:
    import lmms_eval_tasks

    _add_version_part("pack", lambda: f"lmms-eval-tasks-{lmms_eval_tasks.__version__}")


SENT_SETTINGS = frozenset({"presence_penalty", "frequency_penalty", "seed"})
IMAGE_FORMAT_ENV = "LMMS_IMAGE_ENCODE_FORMAT"  # the host's variables (lmms_eval.protocol)
JPEG_QUALITY_ENV = "LMMS_IMAGE_JPEG_QUALITY"
_HOST_KEYS = "_lmms_eval_tasks_host_cache_relevant_keys"


def _image_encoding() -> str:
    """The image encoding the host's OpenAI-compatible clients use, "" for their default (PNG)."""
    image_format = os.environ.get(IMAGE_FORMAT_ENV, "PNG").upper()
    if image_format == "PNG":
        return ""
    quality = os.environ.get(JPEG_QUALITY_ENV, "85") if image_format in {"JPEG", "JPG", "WEBP"} else ""
    return f"image-{image_format}{quality}"


def probe_cache_request_settings() -> tuple[str, str]:
    """APPLIES while the host's keys leave out a setting its OpenAI-compatible clients send."""
    from lmms_eval.caching import response_cache

    keyed = getattr(response_cache, _HOST_KEYS, getattr(response_cache, "CACHE_RELEVANT_KEYS", None))
    expect(
        isinstance(keyed, frozenset) and callable(getattr(response_cache, "canonicalize_gen_kwargs", None)),
        "lmms_eval.caching.response_cache.CACHE_RELEVANT_KEYS is gone",
    )
    left_out = sorted(SENT_SETTINGS - keyed)
    if not left_out:
        return NOT_NEEDED, "the host keys every setting its clients send"
    return APPLIES, f"the host's keys leave out {', '.join(left_out)} and the image encoding: keyed"


def install_cache_request_settings() -> None:
    from lmms_eval.caching import response_cache

    if not hasattr(response_cache, _HOST_KEYS):  # the host's own set, for the probe
        setattr(response_cache, _HOST_KEYS, response_cache.CACHE_RELEVANT_KEYS)
    response_cache.CACHE_RELEVANT_KEYS = frozenset(response_cache.CACHE_RELEVANT_KEYS | SENT_SETTINGS)
    _add_version_part("image encoding", _image_encoding)


# --- 11. llava_hf_loglikelihood: the context tokenized without its images; is_greedy one token off ---------


class ContextWithItsImages:
    """The processor for one llava_hf call: an empty image list becomes ``None`` (the vision tower cannot
    unpack the pixel values of ``[]``), and a call without ``images`` (loglikelihood's context) gets those of
    the call before it. The chat llava_hf always passes ``images=``: only the empty list changes there."""

    def __init__(self, processor: Any) -> None:
        self._processor = processor
        self._images: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "images" not in kwargs:
            kwargs["images"] = self._images
        elif kwargs["images"] is not None and len(kwargs["images"]) == 0:
            kwargs["images"] = None
        self._images = kwargs["images"]
        return self._processor(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


class PredictionsAtTheirTokens:
    """The model for one ``loglikelihood`` call: its logits shifted one position right, so position ``i``
    holds the prediction for token ``i`` (the host's ``is_greedy`` was one token off; the loss unchanged)."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch

        outputs = self._model(*args, **kwargs)
        logits = outputs["logits"]
        outputs["logits"] = torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
        return outputs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def loglikelihood_with_images(host_loglikelihood: Any, self: Any, requests: list[Any]) -> Any:
    """``LlavaHf.loglikelihood`` run on a ``CallView`` of the wrapper whose processor and model are the
    per-call adapters above (nothing shared is swapped)."""
    processor, model = ContextWithItsImages(self._image_processor), PredictionsAtTheirTokens(self.model)
    return host_loglikelihood(CallView(self, _image_processor=processor, model=model), requests)


class _ProbeBatch(dict):
    def to(self, *args: Any, **kwargs: Any) -> _ProbeBatch:
        return self


class _ProbeProcessor:
    """A transformers 5 LLaVA processor's stand-in: a token per character, three per ``<image>``; it refuses
    ``<image>`` without images and an empty image list, as transformers 5 (and the vision tower) do."""

    image_token = "<image>"

    def __call__(self, text: list[str], images: Any = None, return_tensors: str = "pt", **_: Any) -> Any:
        import torch

        (string,) = text
        count = string.count(self.image_token)
        if images is not None and len(images) == 0:
            raise ValueError("empty image list")
        if count != (len(images) if images is not None else 0):
            raise ValueError(f"{count} image tokens in the text but {len(images or [])} images")
        ids: list[int] = []
        for index, part in enumerate(string.split(self.image_token)):
            ids += [3] * 3 if index else []
            ids += [10 + ord(character) % 80 for character in part]
        return _ProbeBatch(input_ids=torch.tensor([ids]))


class _ProbeModel:
    """A causal LM whose every next-token prediction is right (position ``i`` predicts token ``i + 1``); it
    records how many label positions were left unmasked."""

    dtype = None

    def __init__(self) -> None:
        self.scored: list[int] = []

    def __call__(self, input_ids: Any, labels: Any = None, **_: Any) -> dict[str, Any]:
        import torch

        logits = torch.zeros(1, input_ids.shape[1], 100)
        logits[0, torch.arange(input_ids.shape[1] - 1), input_ids[0, 1:]] = 1.0
        self.scored.append(int((labels != -100).sum()))
        return {"loss": torch.tensor(1.0), "logits": logits}


class _ProbeTokenizer:
    chat_template = "probe"
    eos_token_id = 2

    def apply_chat_template(self, messages: list[dict], tokenize: bool = False, **kwargs: Any) -> str:
        text = "".join(f"{message['role']}: {message['content']} " for message in messages)
        return text + ("assistant:" if kwargs.get("add_generation_prompt") else "")

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [ord(character) % 80 for character in text]

    def decode(self, tokens: Any) -> str:
        return ""

    def batch_decode(self, tokens: Any, skip_special_tokens: bool = True) -> list[str]:
        return [""]


def _probe_llava_hf(cls: type, **attributes: Any) -> Any:
    """A ``cls`` instance made without loading a model, with the attributes the host methods read."""
    defaults = {
        "_rank": 1,  # no progress bars
        "_device": "cpu",
        "accelerator": types.SimpleNamespace(is_main_process=False, unwrap_model=lambda model: model),
        "chat_template": None,
        "batch_size_per_gpu": 1,
        "task_dict": {"probe": {"test": {0: {}}}},
    }
    return bare(cls, **{**defaults, **attributes})


def _run_loglikelihood(method: Any, images: int) -> tuple[Any, list[int]]:
    """(result or the exception raised, unmasked label counts) of ``method`` on one request with
    ``images`` images and the three-character continuation "xyz"."""
    from lmms_eval.models.simple.llava_hf import LlavaHf

    model = _ProbeModel()
    instance = _probe_llava_hf(
        LlavaHf, _tokenizer=_ProbeTokenizer(), _image_processor=_ProbeProcessor(), _model=model
    )
    arguments = ("question?", "xyz", lambda doc: ["image"] * images, 0, "probe", "test")
    try:
        return method(instance, [_probe_request("loglikelihood", arguments)]), model.scored
    except Exception as error:  # noqa: BLE001 - the probe reports what the host does
        return error, model.scored


def probe_llava_hf_loglikelihood() -> tuple[str, str]:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    host = unwrapped(LlavaHf.loglikelihood)
    expect_parameters("simple LlavaHf.loglikelihood", host, ["self", "requests"])
    continuation = len(" xyz ")  # "assistant: xyz " minus the prompt "assistant:": what the loss covers
    expected = [(1.0, True)]
    before, scored = _run_loglikelihood(host, images=1)
    if before == expected and scored == [continuation]:
        return NOT_NEEDED, "the host's llava_hf loglikelihood tokenizes the context with its images"
    fixed = functools.partial(loglikelihood_with_images, host)
    for images in (1, 0):
        after, scored = _run_loglikelihood(fixed, images)
        expect(
            after == expected and scored == [continuation],
            f"the fix does not work on this host ({images} image(s): {after!r}, loss over {scored} "
            f"tokens instead of [{continuation}])",
        )
    found = f"{type(before).__name__}: {before}" if isinstance(before, Exception) else repr(before)
    return APPLIES, f"the host's llava_hf loglikelihood gives {found} on a probe request; fixed"


def install_llava_hf_loglikelihood() -> None:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    replaces(LlavaHf, "loglikelihood")(loglikelihood_with_images)


# --- 12. llava_hf_text_only: chat llava_hf passes an empty image list for a request without image ---------


def generate_until_without_empty_images(host_generate_until: Any, self: Any, requests: list[Any]) -> Any:
    """Chat ``LlavaHf.generate_until`` run on a view of the wrapper whose processor passes no empty image
    list (per call: nothing shared is swapped)."""
    view = CallView(self, _image_processor=ContextWithItsImages(self._image_processor))
    return host_generate_until(view, requests)


class _ProbeStop(Exception):
    """Ends a probe's generate_until at the processor call it inspects."""


class _RecordingProcessor:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def apply_chat_template(self, *args: Any, **kwargs: Any) -> str:
        return "user: question?"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        raise _ProbeStop


def _images_passed(method: Any) -> Any:
    """What the chat llava_hf ``method`` passes as ``images=`` for one text-only request (Touched when it
    never calls the processor)."""
    from lmms_eval.models.chat.llava_hf import LlavaHf

    processor = _RecordingProcessor()
    instance = _probe_llava_hf(LlavaHf, _image_processor=processor)
    messages = [{"role": "user", "content": [{"type": "text", "text": "question?"}]}]
    arguments = ("question?", lambda doc: messages, {"max_new_tokens": 1}, 0, "probe", "test")
    try:
        method(instance, [_probe_request("generate_until", arguments)])
    except _ProbeStop:
        return processor.calls[-1].get("images", None)
    return Touched("the processor was not called")


def probe_llava_hf_text_only() -> tuple[str, str]:
    from lmms_eval.models.chat.llava_hf import LlavaHf

    host = unwrapped(LlavaHf.__dict__.get("generate_until"))
    expect_parameters("chat LlavaHf.generate_until", host, ["self", "requests"])
    before = _images_passed(host)
    if before is None:
        return NOT_NEEDED, "the host's chat llava_hf passes no images for a text-only request"
    expect(
        isinstance(before, list) and not before,
        f"chat llava_hf passes images={before!r} for a text-only request, expected []",
    )
    after = _images_passed(functools.partial(generate_until_without_empty_images, host))
    expect(after is None, f"the fix does not work on this host (images={after!r})")
    return APPLIES, "chat llava_hf passes images=[] for a text-only request; it passes None instead"


def install_llava_hf_text_only() -> None:
    from lmms_eval.models.chat.llava_hf import LlavaHf

    replaces(LlavaHf, "generate_until")(generate_until_without_empty_images)


# --- 13. llava_hf_simple_text_only: simple llava_hf answers a text-only request with the last one's inputs


class TextOnlyRequestRefused(RuntimeError):
    """The simple llava_hf was asked to answer a request without an image, which it cannot do right."""


TEXT_ONLY_REFUSAL = (
    "lmms-eval's simple llava_hf (--force_simple) cannot answer a request without an image: it builds no "
    "inputs for it and would answer with the previous request's inputs (or ''); run without --force_simple "
    "(the chat llava_hf answers text-only requests; models.md in the pack's documentation)"
)


def _has_no_image(self: Any, request: Any) -> bool:
    context, _, doc_to_visual, doc_id, task, split = request.args
    return not self.flatten([doc_to_visual(self.task_dict[task][split][doc_id])])


def generate_until_refusing_text_only(host_generate_until: Any, self: Any, requests: list[Any]) -> Any:
    """Simple ``LlavaHf.generate_until`` that refuses, before generating anything, a batch holding a request
    without an image (the host would answer it with the inputs of the request before it)."""
    text_only = [request for request in requests if _has_no_image(self, request)]
    if text_only:
        raise TextOnlyRequestRefused(f"{TEXT_ONLY_REFUSAL} ({len(text_only)} such request(s))")
    return host_generate_until(self, requests)


def probe_llava_hf_simple_text_only() -> tuple[str, str]:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    host = unwrapped(LlavaHf.__dict__.get("generate_until"))
    expect_parameters("simple LlavaHf.generate_until", host, ["self", "requests"])
    processor = _RecordingProcessor()
    instance = _probe_llava_hf(
        LlavaHf,
        _tokenizer=_ProbeTokenizer(),
        _image_processor=processor,
        _model=types.SimpleNamespace(dtype=None, generate=lambda **kwargs: [[]]),
        cache_hook=types.SimpleNamespace(add_partial=lambda *args: None),
        use_cache=False,
    )
    request = _probe_request(
        "generate_until", ("question?", {"max_new_tokens": 1}, lambda doc: [], 0, "probe", "test")
    )
    with _host_quiet(LlavaHf), contextlib.suppress(_ProbeStop):  # the host logs the error it swallows
        host(instance, [request])
    if processor.calls:
        return NOT_NEEDED, "the host's simple llava_hf tokenizes a text-only request"
    try:
        generate_until_refusing_text_only(host, instance, [request])
    except TextOnlyRequestRefused:
        return APPLIES, (
            "the host's simple llava_hf builds no inputs for a text-only request (it answers with the "
            "previous request's); such a request is refused with the way out"
        )
    return MISMATCH, "the guard did not refuse a text-only request on this host"


def install_llava_hf_simple_text_only() -> None:
    from lmms_eval.models.simple.llava_hf import LlavaHf

    replaces(LlavaHf, "generate_until")(generate_until_refusing_text_only)


# --- 14. chat_loglikelihood: chat tasks refuse loglikelihood / multiple_choice requests -------------------


def probe_chat_loglikelihood() -> tuple[str, str]:
    from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask

    method = ConfigurableMessagesTask.__dict__.get("construct_requests")
    for owner, function in (
        ("ConfigurableMessagesTask", method),
        ("ConfigurableTask", ConfigurableTask.__dict__.get("construct_requests")),
    ):
        expect_parameters(f"{owner}.construct_requests", function, ["self", "doc_id", "ctx", "kwargs"])

    class LoglikelihoodTask:  # a chat task asked for a loglikelihood request: it may read its output type
        OUTPUT_TYPE = "loglikelihood"

        def __getattr__(self, name: str) -> Any:
            raise Touched(name)

    try:
        unwrapped(method)(LoglikelihoodTask(), 0, "probe", metadata={"split": "test"})
    except Touched:
        return NOT_NEEDED, "chat tasks no longer refuse loglikelihood requests"
    except Exception as error:  # noqa: BLE001 - the refusal this patch lifts
        return APPLIES, (
            f"chat tasks refuse loglikelihood requests ({type(error).__name__}); "
            "chat-mode loglikelihood / multiple_choice tasks send the simple request shape"
        )
    return NOT_NEEDED, "chat tasks no longer refuse loglikelihood requests"


def install_chat_loglikelihood() -> None:
    from lmms_eval.api.task import ConfigurableMessagesTask, ConfigurableTask

    @replaces(ConfigurableMessagesTask, "construct_requests")
    def construct_requests(original: Any, self: Any, doc_id: int, ctx: str, **kwargs: Any) -> Any:
        if str(self.OUTPUT_TYPE).startswith("generate_until"):
            return original(self, doc_id, ctx, **kwargs)
        return ConfigurableTask.construct_requests(self, doc_id, ctx, **kwargs)


# --- server_timeouts: the OpenAI-compatible models honour timeout; the request rules of server_requests --


def probe_server_timeouts() -> tuple[str, str]:
    """APPLIES while the host's OpenAI-compatible model builds its SDK client without its ``timeout``."""
    from lmms_eval.models.simple.openai import OpenAICompatible

    model = OpenAICompatible.__new__(OpenAICompatible)
    try:
        unwrapped(OpenAICompatible.__init__)(model, base_url="http://127.0.0.1:9/v1", api_key="x", timeout=7)
        client_timeout = model.client.timeout
    except Exception as error:  # noqa: BLE001 - an unexpected host is a mismatch, not a crash
        return MISMATCH, f"OpenAICompatible(timeout=7) raised {type(error).__name__}: {error}"
    if not all(hasattr(model, name) for name in ("max_retries", "retry_backoff_s", "timeout")):
        return MISMATCH, "OpenAICompatible has no max_retries / retry_backoff_s / timeout"
    if getattr(client_timeout, "read", client_timeout) == 7:
        return NOT_NEEDED, "the host's SDK client has the timeout of --model_args"
    return APPLIES, f"the host's SDK client ignores --model_args timeout (its timeout: {client_timeout})"


def install_server_timeouts() -> None:
    """Every OpenAI-compatible host model (and the pack's ``openai_pipelined``) gets ``guard_model`` and its
    ``client.chat.completions.create`` goes through the guard; a down server stops the run once the response
    cache has stored the answers of the batch in flight (``framework/server_requests.py``)."""
    from lmms_eval.caching.response_cache import ResponseCache
    from lmms_eval.models.chat.openai import OpenAICompatible as ChatOpenAICompatible
    from lmms_eval.models.simple.openai import OpenAICompatible

    from lmms_eval_tasks.framework.server_requests import stop_after_cache_store, stop_when_down

    original = OpenAICompatible.__init__
    if is_marked(original):
        return
    replaces(ResponseCache, "execute")(stop_after_cache_store)
    for model_class in (OpenAICompatible, ChatOpenAICompatible):
        replaces(model_class, "generate_until")(stop_when_down)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807 - the host's method name
        from lmms_eval_tasks.framework.server_requests import guard_client_calls, guard_model, guard_of
        from lmms_eval_tasks.judges.redact import safe_url

        original(self, *args, **kwargs)
        if guard_of(self) is None:
            url = safe_url(str(self.client.base_url).rstrip("/"))
            guard = guard_model(self, kwargs.get("timeout"), url)
            guard_client_calls(self, guard)

    __init__.__doc__ = original.__doc__
    OpenAICompatible.__init__ = mark(__init__, original)
