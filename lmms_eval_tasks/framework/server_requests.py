"""Requests to a model server that always end (the host's clients ignored ``--model_args timeout``).
``guard_model`` gives a model's SDK client the timeout (``DEFAULT_TIMEOUT_S``) and no SDK retries, prints
the bound of one request; ``ServerGuard.attempt`` wraps each attempt: 429s pace by ``Retry-After``, a request
waiting ``STUCK_AFTER_S`` is logged, the circuit breaker (``BREAKER_ENV`` failed requests in a row, or only
timeouts for one request's bound) stops the run (``ServerDown``) once the batch in flight is over and its
answers are in the response cache (``stop_when_down``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from loguru import logger

from lmms_eval_tasks.judges.circuit_breaker import CircuitBreaker, parse_retry_after
from lmms_eval_tasks.judges.reply_deadline import bound_replies

DEFAULT_TIMEOUT_S = 300.0  # per attempt, when --model_args gives none (the SDK's own is 600 s)
STUCK_AFTER_S = 60.0  # a request still waiting this long is logged (with its task and document)
BREAKER_ENV = "LMMS_EVAL_TASKS_SERVER_BREAKER"
DEFAULT_BREAKER = 16  # failed requests in a row (each after its retries) that stop the run; 0: never
_GUARD = "_lmms_eval_tasks_guard"


class ServerDown(SystemExit):
    """The model server failed too many requests in a row: the run stops (a ``SystemExit``, so the host's
    ``except Exception`` retries let it pass); its code is the launcher's last line."""


class ServerStopped(RuntimeError):
    """An attempt refused once the breaker is open: the request fails at once, the client ends its batch."""


_CACHE_STORING = threading.local()  # set while the host's response cache runs a batch it will then store


def _seconds(value: float) -> str:
    minutes, seconds = divmod(round(value), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


class ServerGuard:
    """One model's request rules (see the module docstring). Thread-safe."""

    def __init__(self, url: str, timeout: float, attempts: int, backoff: float) -> None:
        from lmms_eval_tasks import environment

        self.url, self.timeout, self.attempts, self.backoff = url, timeout, max(1, attempts), backoff
        self.secrets: tuple[str | None, ...] = ()  # the model's API key, scrubbed from errors
        self.bound = self.attempts * timeout + (self.attempts - 1) * backoff  # the longest a request takes
        self.breaker = CircuitBreaker(environment.integer(BREAKER_ENV, DEFAULT_BREAKER, 0), self.bound)
        self._failure = "?"  # what the last failure was, for the stop line
        self.on_down: Callable[[], None] = lambda: None
        self.probe: Callable[[], Any] | None = None  # a one-token request: a reply means some requests hang
        self.breaker.answers = self._answers
        self._lock = threading.Lock()
        self._not_before = 0.0
        self._tries: dict[int, tuple[Any, int]] = {}  # id(payload) -> (payload, failed attempts)
        self._in_flight: dict[int, tuple[float, Any, bool]] = {}  # call id -> (start, label, logged)
        self._calls = 0
        self.batch: list[Any] = []  # the requests of the batch in flight (who asks what, for the stuck log)
        threading.Thread(target=self._watch, name="server-watch", daemon=True).start()

    def bound_line(self, given: bool) -> str:
        """The line printed at start: what a request may cost, and when the run stops."""
        default = f"default {DEFAULT_TIMEOUT_S:g} s; --model_args timeout=S"
        origin = "--model_args timeout" if given else default
        threshold = self.breaker.threshold
        stops = f"the run stops after {threshold} failed requests in a row, {3 * threshold} failed attempts "
        stops += f"or {_seconds(self.bound)} of only timeouts, new requests' too ({BREAKER_ENV})"
        return (
            f"lmms_eval: model server {self.url}: each attempt waits at most {self.timeout:g} s ({origin}), "
            f"{self.attempts} attempts {self.backoff:g} s apart (max_retries, retry_backoff_s): a request "
            f"fails after at most {_seconds(self.bound)}; "
            f"{stops if threshold else f'no circuit breaker ({BREAKER_ENV}=0)'}"
        )

    def attempt(self, call: Callable[[], Any], payload: Any, label: str | Callable[[], str]) -> Any:
        """One attempt of a request (``payload``: an object that is the same on each of its retries, e.g.
        its messages): paced, watched, counted; refused (``ServerStopped``) once the breaker is open."""
        if self.down:
            raise ServerStopped(self._down_message())
        with self._lock:
            wait = self._not_before - time.monotonic()
            self._calls += 1
            call_id = self._calls
        if wait > 0:
            time.sleep(wait)
        with self._lock:
            self._in_flight[call_id] = (sent := time.monotonic(), label, False)
        try:
            result = call()
            if not getattr(result, "choices", None):  # e.g. a proxy's HTTP 200 carrying {"error": ...}
                said = getattr(result, "error", None)
                said = said.get("message", said) if isinstance(said, dict) else said
                raise ValueError(f"the server replied without choices: {said or 'no error given'}")
        except Exception as error:
            self._failed(error, payload, sent)
            self._scrub(error)
            raise
        finally:
            with self._lock:
                self._in_flight.pop(call_id, None)
        with self._lock:
            self._tries.pop(id(payload), None)
        self.breaker.success()
        return result

    def _scrub(self, error: Exception) -> None:
        """A server's (or proxy's) error can echo the request's headers: the host logs and caches its text."""
        from lmms_eval_tasks.judges.redact import scrub

        text = str(error)
        if (clean := scrub(text, self.secrets)) != text:
            error.args, error.message = (clean,), clean  # type: ignore[attr-defined]

    def _failed(self, error: Exception, payload: Any, sent: float) -> None:
        status, name = getattr(error, "status_code", None), type(error).__name__
        timed_out = "Timeout" in name  # the SDK's APITimeoutError (the reply's deadline included)
        failure = f"timeout after {self.timeout:g} s" if timed_out else f"HTTP {status}" if status else name
        if status == 429:  # alive, asks to wait: every attempt waits; only a request it ends counts
            pause = parse_retry_after(getattr(getattr(error, "response", None), "headers", None))
            failure = "HTTP 429 rate limit" + (f", Retry-After {pause:g} s" if pause is not None else "")
            with self._lock:
                resume_at = time.monotonic() + (1.0 if pause is None else pause)
                self._not_before = max(self._not_before, resume_at)
        message = " ".join(f"{name}: {error}".split())[:300]
        with self._lock:
            before = self._tries.pop(id(payload), (payload, 0))[1]
            if not (last := before + 1 >= self.attempts):
                self._tries[id(payload)] = (payload, before + 1)
        if status != 429 or last:
            self._failure = failure
        if status != 429:
            self.breaker.failed_attempt(message, sent if timed_out else None, first=before == 0)
        if last:
            self.breaker.failed_item(message, (name, status))
            if self.down:
                self.on_down()

    def _answers(self) -> bool:  # whether the server replies to ``probe`` (any HTTP status)
        try:
            return self.probe is not None and self.probe() is not False
        except Exception as error:  # noqa: BLE001 - no reply in time (or no connection): hung
            return getattr(error, "status_code", None) is not None

    down = property(lambda self: self.breaker.open)

    def stop_if_down(self) -> None:
        """Raise ``ServerDown`` once the breaker is open."""
        if self.down:
            raise ServerDown(self._down_message())

    def _down_message(self) -> str:
        from lmms_eval_tasks.judges.redact import scrub

        n, rule, failure = self.breaker.threshold, self.breaker.tripped, self._failure
        failed = f"failed {n} requests in a row, each after {self.attempts} attempts ({failure})"
        if rule == "attempts":  # 3N failed attempts came first (more than 3 attempts a request)
            failed = f"failed {3 * n} attempts in a row ({self.attempts} a request; {failure})"
        elif rule == "hung":
            failed = f"answered nothing for {_seconds(self.bound)}, the longest a request may take: every "
            failed += f"attempt timed out after {self.timeout:g} s (timeout), new requests' too"
        return (
            f"lmms_eval: evaluation stopped: the model server {self.url} {failed}; "
            f"last error: {scrub(self.breaker.last_error or '?', self.secrets)}; answers received so far are "
            "kept in the response cache (--use_cache DIR): once the server answers, rerun the same command "
            "to ask only for the rest"
        )

    def _watch(self) -> None:
        while True:
            time.sleep(min(10.0, STUCK_AFTER_S / 2))
            now = time.monotonic()
            with self._lock:
                stuck = [
                    (key, value)
                    for key, value in self._in_flight.items()
                    if not value[2] and now - value[0] >= STUCK_AFTER_S
                ]
                for call_id, (started, label, _) in stuck:
                    self._in_flight[call_id] = (started, label, True)
            for _, (started, label, _) in stuck:
                logger.warning(
                    f"model server {self.url}: a request has waited {now - started:.0f} s for its answer "
                    f"({label() if callable(label) else label}; timeout {self.timeout:g} s per attempt)"
                )


def guard_model(model: Any, given_timeout: Any, url: str) -> ServerGuard:
    """Give ``model`` (the host's OpenAI-compatible model, after its ``__init__``) its request rules: the
    SDK client with the timeout and no retries of its own, and a ``ServerGuard`` (idempotent)."""
    guard = getattr(model, _GUARD, None)
    if guard is not None:
        return guard
    timeout = float(given_timeout) if given_timeout not in (None, "") else DEFAULT_TIMEOUT_S
    model.timeout = timeout
    model.client = model.client.with_options(timeout=timeout, max_retries=0)
    bound_replies(model.client, timeout)
    guard = ServerGuard(url, timeout, int(model.max_retries), float(model.retry_backoff_s))
    guard.secrets = (getattr(model.client, "api_key", None),)
    guard.on_down = lambda: setattr(model, "retry_backoff_s", 0)  # refused attempts: no wait between them
    ping = {"model": model.model_version, "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
    guard.probe = lambda: model.client.with_options().chat.completions.create(**ping)  # a copy: unguarded
    setattr(model, _GUARD, guard)
    if os.environ.get("LOCAL_RANK", "0") == "0":
        print(guard.bound_line(given_timeout not in (None, "")), file=sys.stderr)
    return guard


def stop_when_down(generate_until: Callable[..., list], model: Any, requests: list) -> list:
    """``generate_until(model, requests)`` stopped (``ServerDown``) before it asks once the server is down and
    after the batch the breaker opened in, unless the response cache stores it first (then it stops)."""
    guard = guard_of(model)
    if guard is not None:
        guard.stop_if_down()
        guard.batch = requests  # a request still waiting is logged with its task and document (``_asked``)
    results = generate_until(model, requests)
    if guard is not None and not getattr(_CACHE_STORING, "depth", 0):
        guard.stop_if_down()
    return results


def stop_after_cache_store(execute: Callable[..., list], cache: Any, lm: Any, *args: Any) -> list:
    """The host's ``ResponseCache.execute``: the answers of a batch in which the breaker opened are stored,
    then the run stops, so a rerun asks only for what is missing."""
    _CACHE_STORING.depth = getattr(_CACHE_STORING, "depth", 0) + 1
    try:
        results = execute(cache, lm, *args)
    finally:
        _CACHE_STORING.depth -= 1
    if (guard := guard_of(lm)) is not None:
        guard.stop_if_down()
    return results


def guard_of(model: Any) -> ServerGuard | None:
    """The guard ``guard_model`` gave ``model``, or None."""
    return getattr(model, _GUARD, None)


def _asked(messages: Any, batch: list[Any]) -> str:
    """Who a request is, for the log: the task and document of the batch asking the text of its last message
    (with how many others ask the same), else that text (80 characters at most)."""
    try:
        content = messages[-1]["content"]
        texts = [part.get("text", "") for part in content] if isinstance(content, list) else [content]
        text = " ".join(" ".join(str(item) for item in texts).split())
    except (IndexError, KeyError, TypeError, AttributeError):
        return "a request"
    same = [ask for ask in batch if " ".join(str(ask.args[0]).split()) == text]  # read only when logged
    if not same:
        return f"asking {text[:80]!r}"
    others = f" or one of {len(same) - 1} others asking the same" if len(same) > 1 else ""
    return f"task {same[0].task_name}, document {same[0].doc_id}{others}"


def guard_client_calls(model: Any, guard: ServerGuard) -> None:
    """Route the host model's ``client.chat.completions.create`` through ``guard`` and mark replies cut at
    the token limit (``framework.failed_generations.CutReply``)."""
    from lmms_eval_tasks.framework.failed_generations import cut_reply

    completions = model.client.chat.completions
    create = completions.create

    def guarded_create(**payload: Any) -> Any:
        messages = payload.get("messages")
        response = guard.attempt(lambda: create(**payload), messages, lambda: _asked(messages, guard.batch))
        message = response.choices[0].message  # ``attempt`` refuses a reply without choices
        message.content = cut_reply(message.content, getattr(response.choices[0], "finish_reason", None))
        return response

    completions.create = guarded_create
