"""The OpenAI-compatible LLM judge: concurrent, cached, retried, accounted, secret-free. Each (request,
repeat) is one job writing its own slot, so no item can receive another item's verdict."""

from __future__ import annotations

import random
import re
import sqlite3
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.judges.base import Judge, JudgeReply, JudgeRequest, validate_requests
from lmms_eval_tasks.judges.cache import ReplyCache, cache_key
from lmms_eval_tasks.judges.circuit_breaker import CircuitBreaker, parse_retry_after
from lmms_eval_tasks.judges.config import Endpoint, total_timeout_seconds
from lmms_eval_tasks.judges.integrity import LENGTH_REFUSED, is_length_refusal
from lmms_eval_tasks.judges.pricing import estimate_cost
from lmms_eval_tasks.judges.redact import safe_url, scrub
from lmms_eval_tasks.judges.reply_deadline import bound_replies

DEADLINE_GRACE_SECONDS = 2.0  # after the deadline, how long to wait for attempts to return their slots
DEADLINE_REASON = "judging deadline"
_RETRYABLE_STATUS = {408, 409, 425, 429}


@dataclass(frozen=True)
class _Outcome:
    """The result of one job: reply text or an error, plus accounting."""

    text: str | None
    error: str | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _CallFailed(Exception):
    """One attempt failed; ``retryable`` says whether another attempt may help."""

    def __init__(
        self,
        message: str,
        retryable: bool,
        retry_after: float | None = None,
        rate_limited: bool = False,
        too_long: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable, self.retry_after = retryable, retry_after
        self.rate_limited = rate_limited  # HTTP 429: the endpoint is alive and asks to wait
        self.too_long = too_long  # the prompt (the model's text) is too long: the endpoint is alive


_TITLE = re.compile(r"<title[^>]*>([^<]{0,200})", re.IGNORECASE)


def _refuse_html(raw: Any) -> None:
    """Raise a clear, non-retryable _CallFailed when a successful status carries an HTML page (a web UI,
    proxy login or wrong path answered instead of the API): the client would report "no choices"."""
    headers = getattr(raw, "headers", None)
    content_type = str(headers.get("content-type", "") if headers is not None else "")
    http_response = getattr(raw, "http_response", None)
    try:
        head = http_response.text[:2000] if http_response is not None else ""
    except Exception:  # undecodable body: leave it to the parser
        head = ""
    if "html" not in content_type.lower() and not head.lstrip().startswith("<"):
        return
    title = _TITLE.search(head)
    label = f" titled {' '.join(title.group(1).split())[:80]!r}" if title else ""
    status = getattr(http_response, "status_code", "?")
    raise _CallFailed(
        f"malformed response: an HTML page{label} (HTTP {status}, content-type "
        f"{content_type.split(';')[0] or 'none'}), not a JSON chat completion: is the URL the API's base "
        "URL (usually ending in /v1)?",
        retryable=False,
    )


def _open_cache(path: str | Path | None) -> ReplyCache:
    """The on-disk cache, or (with a loud warning) an in-memory one if the file cannot be used."""
    try:
        return ReplyCache(path)
    except (OSError, sqlite3.Error) as error:
        logger.warning(
            f"!!! judge cache {path} is unusable ({type(error).__name__}: {error}); judging WITHOUT a "
            f"persistent cache (reruns will call the endpoint again). Fix or delete the file, or set "
            f"LMMS_EVAL_TASKS_JUDGE_CACHE."
        )
        return ReplyCache(None)


class OpenAIJudge(Judge):
    """An LLM judge behind any OpenAI-compatible chat endpoint (OpenAI, Azure, vLLM, Ollama, LM Studio)."""

    kind = "openai"

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        model: str,
        repeats: int = 1,
        concurrency: int = 16,
        timeout: float = 60.0,
        max_retries: int = 6,
        max_tokens: int = 1024,
        temperature: float = 0.0,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        circuit_breaker: int = 20,
        total_timeout: float = 0.0,
        cache_path: str | Path | None = None,
        cache_namespace: str = "",
        task: str | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(model, str) or not model.strip():
            raise ValueError("judge model name must be a non-empty string")
        self.endpoint = endpoint
        self.model = model
        self.repeats = repeats
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.circuit_breaker = circuit_breaker
        self.total_timeout = total_timeout
        self.cache_namespace = cache_namespace
        self.task = task
        self._cache = _open_cache(cache_path)
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._served_models: set[str] = set()
        self._fingerprints: set[str] = set()  # the replies' system_fingerprint: the backend that answered
        self._random = random.Random()

    # -- public API -------------------------------------------------------------------------------------
    @property
    def cache_path(self) -> Path | None:
        """Where replies are cached (None: in memory only)."""
        return self._cache.path

    def generation_params(self) -> dict[str, Any]:
        """The generation parameters sent with every request (part of the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}

    def judge(
        self, requests: Sequence[JudgeRequest], *, repeats: int | None = None, desc: str = "judging"
    ) -> list[list[JudgeReply]]:
        """Judge every request ``repeats`` times: cache first, then concurrent calls with retries."""
        validate_requests(requests)
        repeats = self._resolve_repeats(repeats)
        params = self.generation_params()
        results: list[list[JudgeReply | None]] = [[None] * repeats for _ in requests]
        slots_by_key: dict[str, list[tuple[int, int]]] = {}
        messages_by_key: dict[str, tuple[list[dict[str, str]], int]] = {}
        for index, request in enumerate(requests):
            messages = request.messages()
            for repeat in range(repeats):
                key = cache_key(self.model, messages, params, repeat, self.cache_namespace)
                slots_by_key.setdefault(key, []).append((index, repeat))
                messages_by_key[key] = (messages, repeat)
        try:
            hits = self._cache.get_many(slots_by_key)
        except sqlite3.Error as error:
            logger.warning(f"!!! judge cache read failed ({error}); judging everything again")
            hits = {}
        for key, cached in hits.items():
            for index, repeat in slots_by_key[key]:
                results[index][repeat] = JudgeReply(text=cached.text, error=None, cached=True, repeat=repeat)
        hit_slots = sum(len(slots_by_key[key]) for key in hits)
        self._count(cache_hits=hit_slots)
        pending = [key for key in slots_by_key if key not in hits]
        if pending:
            self._run_pending(pending, slots_by_key, messages_by_key, results, hit_slots, desc)
        complete: list[list[JudgeReply]] = []
        for index, replies in enumerate(results):
            row = []
            for repeat, reply in enumerate(replies):
                # defensive: a slot can only be empty if a worker died in an unforeseen way
                row.append(reply or JudgeReply(None, "internal error: no reply recorded", False, repeat))
                if reply is None:
                    logger.error(f"{desc}: item {index} repeat {repeat} has no recorded reply")
            complete.append(row)
        return self._finish(complete, desc)

    def describe(self) -> dict[str, Any]:
        """JSON-safe settings recorded in results; the endpoint is shown without credentials or query."""
        return {
            "kind": self.kind,
            "model": self.model,
            "served_models": sorted(self._served_models),
            "system_fingerprints": sorted(self._fingerprints),
            "api_type": self.endpoint.api_type,
            "endpoint": safe_url(self.endpoint.base_url),
            "endpoint_configured_by": self.endpoint.source,
            "api_version": self.endpoint.api_version,
            **{name: getattr(self, name) for name in ("temperature", "max_tokens", "repeats", "concurrency")},
            "timeout_seconds": self.timeout,
            "max_retries": self.max_retries,
            "backoff_base_seconds": self.backoff_base,
            "backoff_max_seconds": self.backoff_max,
            "circuit_breaker_items": self.circuit_breaker,
            "total_timeout_seconds": self.total_timeout or "auto (120 s + 1 s per reply to fetch)",
            "cache_path": str(self.cache_path) if self.cache_path is not None else None,
            "cache_namespace": self.cache_namespace,
            "task": self.task,
        }

    def close(self) -> None:
        """Release the HTTP client and the cache connection."""
        if self._client is not None:
            self._client.close()
        self._cache.close()

    # -- internals --------------------------------------------------------------------------------------
    def _estimated_cost(self, counters: dict[str, int]) -> float | None:
        return estimate_cost(
            self.model, counters.get("prompt_tokens", 0), counters.get("completion_tokens", 0)
        )

    def _run_pending(
        self,
        pending: list[str],
        slots_by_key: dict[str, list[tuple[int, int]]],
        messages_by_key: dict[str, tuple[list[dict[str, str]], int]],
        results: list[list[JudgeReply | None]],
        already_done: int,
        desc: str,
    ) -> None:
        from tqdm.auto import tqdm

        # no hung rule (the model server's): two slow items in a row opened it, unjudged items leave metrics
        breaker = CircuitBreaker(self.circuit_breaker)
        total = sum(len(slots) for slots in slots_by_key.values())
        workers = max(1, min(self.concurrency, len(pending)))
        budget = total_timeout_seconds(self.total_timeout, total - already_done)
        deadline = time.monotonic() + budget
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judge")
        try:
            with tqdm(
                total=total, initial=already_done, desc=desc, unit="reply", dynamic_ncols=True
            ) as progress:
                futures = {
                    pool.submit(self._job, key, *messages_by_key[key], breaker, deadline, budget): key
                    for key in pending
                }
                try:
                    # every attempt is cut at the deadline; the grace only covers threads finishing up
                    finished = as_completed(futures, timeout=budget + DEADLINE_GRACE_SECONDS)
                    for future in finished:
                        self._store(future, futures[future], slots_by_key, results, progress)
                except TimeoutError:
                    breaker.stop.set()
                    late = sum(1 for future in futures if not future.done())
                    logger.warning(
                        f"!!! {desc}: the judging deadline ({budget:g} s, "
                        f"LMMS_EVAL_TASKS_JUDGE_TOTAL_TIMEOUT) passed with {late} request(s) unfinished; "
                        "they are unjudged"
                    )
                    for future, key in futures.items():
                        if not future.done():
                            future.cancel()
                            for index, repeat in slots_by_key[key]:
                                results[index][repeat] = JudgeReply(
                                    None, self._deadline_reason(budget, breaker.last_error), False, repeat
                                )
                        elif results[slots_by_key[key][0][0]][slots_by_key[key][0][1]] is None:
                            self._store(future, key, slots_by_key, results, progress)
        except BaseException:
            # Ctrl-C or a crash: drop queued jobs instead of waiting for them; replies already received are
            # in the cache, so a rerun resumes where this one stopped
            breaker.stop.set()  # running jobs make no further attempts and stop sleeping
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        if breaker.stop.is_set():  # deadline: threads still in a call end with their (deadline-cut) timeout
            pool.shutdown(wait=False, cancel_futures=True)
        else:
            pool.shutdown(wait=True)

    def _store(
        self,
        future: Any,
        key: str,
        slots_by_key: dict[str, list[tuple[int, int]]],
        results: list[list[JudgeReply | None]],
        progress: Any,
    ) -> None:
        """Write one finished job's outcome into every slot that shares its key."""
        try:
            outcome = future.result()
        except Exception as error:  # _job never raises; keep the item unjudged if it somehow does
            outcome = _Outcome(None, f"internal error: {self._clean(f'{type(error).__name__}: {error}')}")
        for index, repeat in slots_by_key[key]:
            results[index][repeat] = JudgeReply(outcome.text, outcome.error, False, repeat)
        progress.update(len(slots_by_key[key]))

    def _deadline_reason(self, budget: float, last_error: str | None) -> str:
        detail = f"; last error: {last_error}" if last_error else ""
        return f"{DEADLINE_REASON} ({budget:g} s for the whole judging phase) reached{detail}"

    def _get_client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                import openai

                if self.endpoint.api_type == "azure":
                    self._client = openai.AzureOpenAI(
                        api_key=self.endpoint.api_key,
                        azure_endpoint=self.endpoint.base_url,
                        api_version=self.endpoint.api_version,
                        max_retries=0,
                        timeout=self.timeout,
                    )
                else:
                    from urllib.parse import parse_qsl, urlsplit, urlunsplit

                    parts = urlsplit(self.endpoint.base_url)  # a query (``?key=``) goes on every request
                    self._client = openai.OpenAI(
                        api_key=self.endpoint.api_key,
                        base_url=urlunsplit((*parts[:3], "", "")),
                        default_query=dict(parse_qsl(parts.query)) or None,
                        max_retries=0,
                        timeout=self.timeout,
                    )
                bound_replies(self._client, self.timeout)  # a reply trickled a byte at a time ends too
            return self._client

    def _clean(self, text: str) -> str:
        """Error text safe to show: secrets scrubbed, length bounded."""
        text = scrub(text, (self.endpoint.api_key,))
        return text if len(text) <= 300 else text[:297] + "..."

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter (half fixed, half random), never shorter than Retry-After."""
        ceiling = min(self.backoff_max, self.backoff_base * (2**attempt))
        delay = ceiling * (0.5 + 0.5 * self._random.random())
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay

    def _job(
        self,
        key: str,
        messages: list[dict[str, str]],
        repeat: int,
        breaker: CircuitBreaker,
        deadline: float,
        budget: float,
    ) -> _Outcome:
        """Judge one (messages, repeat): up to 1 + max_retries attempts, none past the phase's deadline;
        caches and returns the outcome."""
        error = "not attempted"
        for attempt in range(self.max_retries + 1):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _Outcome(None, self._deadline_reason(budget, breaker.last_error))
            if breaker.open:
                return _Outcome(
                    None,
                    f"skipped: endpoint failing (circuit breaker open after repeated failures; last error: "
                    f"{breaker.last_error})",
                )
            if attempt > 0:
                self._count(retries=1)
            try:
                outcome = self._attempt(messages, min(self.timeout, remaining))
            except Exception as failure:
                if not isinstance(failure, _CallFailed):  # never let a surprise escape: retry, then unjudged
                    failure = _CallFailed(f"unexpected error: {type(failure).__name__}: {failure}", True)
                error = self._clean(str(failure))
                if failure.too_long:  # the model's failure, not the endpoint's: no retry, no breaker count
                    breaker.success()
                    return _Outcome(None, error)
                if not failure.rate_limited:
                    breaker.failed_attempt(error)
                if time.monotonic() >= deadline:
                    return _Outcome(None, self._deadline_reason(budget, error))
                if not failure.retryable or attempt == self.max_retries:
                    break
                pause = min(self._backoff(attempt, failure.retry_after), deadline - time.monotonic())
                breaker.stop.wait(pause)  # woken at once when the judging phase stops
                continue
            try:
                tokens = (outcome.prompt_tokens, outcome.completion_tokens)
                self._cache.put(key, self.model, repeat, outcome.text or "", *tokens)
            except Exception as cache_error:  # a full disk must not cost the verdict we paid for
                logger.warning(f"judge cache write failed: {self._clean(str(cache_error))}")
            breaker.success()
            return outcome
        attempts = attempt + 1
        message = f"{error} (after {attempts} attempt{'s' if attempts != 1 else ''})"
        breaker.failed_item(message)
        return _Outcome(None, message)

    def _attempt(self, messages: list[dict[str, str]], timeout: float | None = None) -> _Outcome:
        """One HTTP call (``timeout`` seconds at most); returns the reply or raises _CallFailed."""
        import openai

        timeout = self.timeout if timeout is None else timeout
        client = self._get_client()
        self._count(calls=1)
        try:
            raw = client.chat.completions.with_raw_response.create(
                model=self.model,
                messages=messages,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                timeout=timeout,
            )
            _refuse_html(raw)
            response = raw.parse()
        except _CallFailed:
            raise
        except openai.APITimeoutError:
            raise _CallFailed(f"timeout after {timeout:.3g} s", retryable=True) from None
        except openai.APIConnectionError as error:
            cause = error.__cause__ or error
            raise _CallFailed(f"connection error: {type(cause).__name__}: {cause}", retryable=True) from None
        except openai.APIStatusError as error:
            status = error.status_code
            # an exhausted quota is also a 429, but waiting cannot help
            no_quota = status == 429 and getattr(error, "code", None) == "insufficient_quota"
            retryable = (status in _RETRYABLE_STATUS or status >= 500) and not no_quota
            retry_after = parse_retry_after(error.response.headers) if error.response is not None else None
            detail = re.sub(r"^Error code: \d+ - ", "", str(error.message))
            if is_length_refusal(status, getattr(error, "code", None), detail):
                message = f"{LENGTH_REFUSED} (HTTP {status}: {detail})"
                raise _CallFailed(message, retryable=False, too_long=True) from None
            rate_limited = status == 429 and not no_quota
            raise _CallFailed(f"HTTP {status}: {detail}", retryable, retry_after, rate_limited) from None
        except openai.APIResponseValidationError as error:
            raise _CallFailed(f"malformed response: {error.message}", retryable=True) from None
        except Exception as error:  # malformed JSON bodies surface as decode errors, among others
            raise _CallFailed(
                f"malformed or unexpected response: {type(error).__name__}: {error}", retryable=True
            ) from None
        return self._read_response(response)

    def _read_response(self, response: Any) -> _Outcome:
        if isinstance(response, str):  # the client returns the text of a body that is not JSON
            shown = self._clean(" ".join(response.split())[:120])
            raise _CallFailed(f"malformed response: not JSON ({shown!r})", retryable=True)
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise _CallFailed("malformed response: no choices", retryable=True)
        message = getattr(choices[0], "message", None)
        text = getattr(message, "content", None)
        if not isinstance(text, str) or not text.strip():
            finish = getattr(choices[0], "finish_reason", None)
            raise _CallFailed(f"empty reply (finish_reason={finish})", retryable=True)
        served, fingerprint = getattr(response, "model", None), getattr(response, "system_fingerprint", None)
        with self._usage_lock:
            self._served_models.update([served] if isinstance(served, str) and served else [])
            self._fingerprints.update([fingerprint] if isinstance(fingerprint, str) and fingerprint else [])
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        self._count(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        # a reply can echo the request's credentials (a proxy, a debugging endpoint): scrubbed before it is
        # cached, logged or stored anywhere
        return _Outcome(scrub(text, (self.endpoint.api_key,)), None, prompt_tokens, completion_tokens)
