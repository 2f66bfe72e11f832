"""A local OpenAI-compatible chat-completions server for tests and benchmarks (stdlib only).

Reusable: ``with FakeOpenAIServer(reply=lambda prompt: "correct") as server:`` then point the real
``openai`` client (or ``get_judge(base_url=server.base_url, ...)``) at ``server.base_url``. It can add
latency, inject faults per call (429 with Retry-After, 500, timeouts, malformed JSON, empty choices,
401 echoing the key, replies cut at the token limit) and records every call.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

FAULT_KINDS = (
    "rate_limit",
    "server_error",
    "timeout",
    "malformed_json",
    "empty_choices",
    "unauthorized",
    "bad_request",
    "empty_content",
    "insufficient_quota",
    "html_page",
    "context_length_exceeded",
    "echo_headers_400",
    "echo_headers_500",
    "cut",
    "trickle",
    "trickle_headers",
)
TRANSIENT_FAULTS = ("rate_limit", "server_error", "timeout", "malformed_json", "empty_choices")


@dataclass
class FakeCall:
    """One request the server received."""

    index: int
    time: float
    prompt: str  # content of the last user message
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    headers: dict[str, str]
    attempt: int  # 0 for the first time this prompt (and repeat-free body) was seen, 1 for the second, ...
    fault: str | None = None
    status: int = 200
    path: str = ""  # request path including the query string (Azure sends ?api-version=...)


@dataclass
class Fault:
    """A fault to inject for one call; ``retry_after`` sets the 429 header, ``sleep`` the timeout delay."""

    kind: str
    retry_after: str | None = "0.2"
    sleep: float = 3.0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {self.kind!r}; known: {FAULT_KINDS}")


FaultPlan = Callable[[FakeCall], "Fault | str | None"]


def stable_fraction(text: str) -> float:
    """A deterministic number in [0, 1) from text (to pick which prompts get faults, reproducibly)."""
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) / 2**32


def fail_first_attempts(
    share: float,
    kinds: Sequence[str] = TRANSIENT_FAULTS,
    *,
    retry_after: str = "0.2",
    sleep: float = 3.0,
    salt: str = "",
) -> FaultPlan:
    """A fault plan: the first attempt of ``share`` of the prompts fails, cycling through ``kinds``."""

    def plan(call: FakeCall) -> Fault | None:
        if call.attempt != 0:
            return None
        fraction = stable_fraction(salt + call.prompt)
        if fraction >= share:
            return None
        kind = kinds[int(fraction / share * len(kinds)) % len(kinds)]
        return Fault(kind, retry_after=retry_after, sleep=sleep)

    return plan


def always_fail(prompts: set[str], kind: str = "server_error") -> FaultPlan:
    """A fault plan: every attempt for the given prompts fails."""
    return lambda call: Fault(kind) if call.prompt in prompts else None


def combine(*plans: FaultPlan) -> FaultPlan:
    """The first fault any plan returns."""

    def plan(call: FakeCall) -> Fault | str | None:
        for each in plans:
            fault = each(call)
            if fault:
                return fault
        return None

    return plan


class FakeOpenAIServer:
    """Threaded fake of ``POST /v1/chat/completions`` with latency, fault injection and a call record."""

    def __init__(
        self,
        reply: Callable[[str], str] | None = None,
        *,
        latency: float = 0.0,
        faults: FaultPlan | None = None,
        model_suffix: str = "",
        host: str = "127.0.0.1",
        port: int = 0,
        max_prompt_chars: int | None = None,
        reply_with_headers: Callable[[str, dict[str, str]], str] | None = None,
    ) -> None:
        self.reply = reply or (lambda prompt: "ok")
        # a judge with a context window: prompts longer than this are refused (HTTP 400
        # context_length_exceeded, like OpenAI's); ``reply_with_headers`` sees the request headers too
        self.max_prompt_chars = max_prompt_chars
        self.reply_with_headers = reply_with_headers
        self.latency = latency
        self.faults = faults
        self.model_suffix = model_suffix
        self.calls: list[FakeCall] = []
        self.model_listings: list[tuple[str, dict[str, str]]] = []  # GET .../models: (path, headers)
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._attempts: Counter[str] = Counter()
        self._host, self._port = host, port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Start serving in a daemon thread."""
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer((self._host, self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="fake-openai"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """Base URL for the openai client (``http://127.0.0.1:<port>/v1``)."""
        return f"http://{self._host}:{self.port}/v1"

    # -- inspection -------------------------------------------------------------------------------------
    def prompts(self) -> list[str]:
        """The prompts of all calls, in arrival order."""
        with self._lock:
            return [call.prompt for call in self.calls]

    def call_count(self) -> int:
        """Number of calls received."""
        with self._lock:
            return len(self.calls)

    def reset(self) -> None:
        """Forget recorded calls and attempt counters."""
        with self._lock:
            self.calls.clear()
            self._attempts.clear()
            self.max_in_flight = 0

    # -- request handling -------------------------------------------------------------------------------
    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> FakeCall:
        messages = body.get("messages") or []
        user = [
            message for message in messages if isinstance(message, dict) and message.get("role") == "user"
        ]
        content = user[-1].get("content", "") if user else ""
        prompt = content if isinstance(content, str) else json.dumps(content)
        with self._lock:
            attempt = self._attempts[prompt]
            self._attempts[prompt] += 1
            call = FakeCall(len(self.calls), time.time(), prompt, messages, body, headers, attempt)
            self.calls.append(call)
        if self.faults is not None:
            fault = self.faults(call)
            if isinstance(fault, str):
                fault = Fault(fault)
            call.fault = fault.kind if fault else None
            call._fault_object = fault  # type: ignore[attr-defined]
        return call


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in separate writes: avoid 40 ms ACK stalls

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr access logs
            return

        def _send(
            self,
            status: int,
            payload: bytes,
            headers: dict[str, str] | None = None,
            content_type: str = "application/json",
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            body = {"error": {"message": message, "type": "fake_error", "code": status}}
            self._send(status, json.dumps(body).encode(), headers)

        def do_GET(self) -> None:  # noqa: N802 - ``GET .../models``, what `doctor` asks
            server.model_listings.append((self.path, dict(self.headers.items())))
            if not urlsplit(self.path).path.rstrip("/").endswith("/models"):
                self._error(404, f"unknown path {self.path}")
                return
            listing = {"object": "list", "data": [{"id": "fake", "object": "model"}]}
            self._send(200, json.dumps(listing).encode())

        def do_POST(self) -> None:  # noqa: N802 - http.server naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not urlsplit(self.path).path.rstrip("/").endswith("/chat/completions"):
                self._error(404, f"unknown path {self.path}")
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._error(400, "request body is not JSON")
                return
            call = server._record(body, {name.lower(): value for name, value in self.headers.items()})
            call.path = self.path
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                if server.latency:
                    time.sleep(server.latency)
                fault: Fault | None = getattr(call, "_fault_object", None)
                if fault is None and server.max_prompt_chars is not None:
                    if len(call.prompt) > server.max_prompt_chars:
                        fault = Fault("context_length_exceeded")
                        call.fault = fault.kind
                if fault is not None:
                    self._fault(call, fault)
                    return
                if server.reply_with_headers is not None:
                    text = server.reply_with_headers(call.prompt, call.headers)
                else:
                    text = server.reply(call.prompt)
                self._send(
                    200, json.dumps(_completion(body, text, server.model_suffix, call.prompt)).encode()
                )
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _fault(self, call: FakeCall, fault: Fault) -> None:
            kind = fault.kind
            if kind == "rate_limit":
                call.status = 429
                headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
                self._error(429, "Rate limit reached, slow down", headers)
            elif kind == "insufficient_quota":  # OpenAI's reply when the account has no credit left
                call.status = 429
                body = {
                    "error": {
                        "message": "You exceeded your current quota",
                        "type": "insufficient_quota",
                        "code": "insufficient_quota",
                    }
                }
                self._send(429, json.dumps(body).encode())
            elif kind == "server_error":
                call.status = 500
                self._error(500, "The server had an error while processing your request")
            elif kind == "timeout":
                time.sleep(fault.sleep)
                call.status = 200
                text = server.reply(call.prompt)
                self._send(
                    200, json.dumps(_completion(call.body, text, server.model_suffix, call.prompt)).encode()
                )
            elif kind == "cut":  # the reply, ended at the token limit
                body = _completion(call.body, server.reply(call.prompt), server.model_suffix, call.prompt)
                body["choices"][0]["finish_reason"] = "length"
                self._send(200, json.dumps(body).encode())
            elif kind == "trickle":  # the reply a byte at a time, spread over ``sleep`` seconds
                payload = json.dumps(_completion(call.body, "ok", server.model_suffix, call.prompt)).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    for index in range(len(payload)):
                        time.sleep(fault.sleep / len(payload))
                        self.wfile.write(payload[index : index + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up
            elif (
                kind == "trickle_headers"
            ):  # the headers a byte at a time over ``sleep`` seconds, then the reply
                payload = json.dumps(_completion(call.body, "ok", server.model_suffix, call.prompt)).encode()
                head = f"HTTP/1.1 200 OK\r\nX-Padding: {'x' * 40}\r\nContent-Length: {len(payload)}\r\n\r\n"
                try:
                    for byte in head.encode():
                        time.sleep(fault.sleep / len(head))
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up
            elif kind == "malformed_json":
                self._send(200, b'{"id": "x", "choices": [{"message": {"content": "trunc')
            elif kind == "empty_choices":
                body = _completion(call.body, "", server.model_suffix, call.prompt)
                body["choices"] = []
                self._send(200, json.dumps(body).encode())
            elif kind == "empty_content":
                body = _completion(call.body, "", server.model_suffix, call.prompt)
                body["choices"][0]["message"]["content"] = None
                self._send(200, json.dumps(body).encode())
            elif kind == "unauthorized":
                call.status = 401
                key = call.headers.get("authorization", "").removeprefix("Bearer ")
                self._error(401, f"Incorrect API key provided: {key}. You can find your API key at example.")
            elif kind == "bad_request":
                call.status = 400
                self._error(400, "Invalid request")
            elif kind == "context_length_exceeded":  # OpenAI's refusal of a prompt above the window
                call.status = 400
                body = {
                    "error": {
                        "message": "This model's maximum context length is 8192 tokens. However, your "
                        "messages resulted in 20000 tokens. Please reduce the length of the messages.",
                        "type": "invalid_request_error",
                        "param": "messages",
                        "code": "context_length_exceeded",
                    }
                }
                self._send(400, json.dumps(body).encode())
            elif kind in ("echo_headers_400", "echo_headers_500"):  # a proxy echoing the request headers
                call.status = 400 if kind.endswith("400") else 500
                self._error(call.status, f"bad upstream; request headers were {json.dumps(call.headers)}")
            elif kind == "html_page":  # a web UI or proxy page served with status 200
                page = b"<!DOCTYPE html><html><head><title>Sign in - Corporate Proxy</title></head></html>"
                self._send(200, page, content_type="text/html; charset=utf-8")

    return Handler


def _completion(body: dict[str, Any], text: str, model_suffix: str, prompt: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "")) + model_suffix,
        "system_fingerprint": "fp_fake0001",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(prompt.split()) + len(text.split()),
        },
    }


def _completion_bytes(call: FakeCall, text: str, model_suffix: str) -> bytes:
    return json.dumps(_completion(call.body, text, model_suffix, call.prompt)).encode()


JUDGE_ENV_PREFIXES = ("OPENAI_", "AZURE_", "LMMS_EVAL_TASKS_JUDGE")
JUDGE_ENV_NAMES = ("API_TYPE", "API_VERSION", "MODEL_VERSION", "DEPLOYMENT_NAME", "LMMS_EVAL_TASKS_CACHE")


def isolate_judge_env(monkeypatch: Any, cache_root: Any, self_test: bool = False) -> None:
    """Remove every judge-related env var (pytest monkeypatch); point the judge cache at cache_root. The
    judge self-test is off unless ``self_test``: these tests count the run's own judge calls (the self-test
    has its own, tests/judges/test_judge_self_test.py)."""
    import os

    for name in list(os.environ):
        if name.startswith(JUDGE_ENV_PREFIXES) or name in JUDGE_ENV_NAMES:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LMMS_EVAL_TASKS_CACHE", str(cache_root))
    if not self_test:
        monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_SELF_TEST", "off")
