"""A deadline on a whole reply for an ``openai`` client, shared by the model clients and the judge: the
SDK's timeout bounds each read, not the reply: a server sending a byte at a time held a request for ever."""

from __future__ import annotations

import math
import threading
import time
from typing import Any


def bound_replies(client: Any, seconds: float) -> None:
    """End an attempt whose reply (headers included) is not all in ``seconds`` (or the request's own shorter
    read timeout) after it was sent: the SDK's timeout bounds each read, so a server trickling its headers or
    reply a byte at a time held a request for ever. Every read of the client's connections ends at its
    thread's attempt's deadline, through a proxy too (idempotent)."""
    import httpcore2

    deadline = threading.local()

    class Capped:  # the pool's network backend, and each connection it opens (plain or TLS)
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def connect_tcp(self, *args: Any, **kwargs: Any) -> Capped:
            return Capped(self.inner.connect_tcp(*args, **kwargs))

        def start_tls(self, *args: Any, **kwargs: Any) -> Capped:
            return Capped(self.inner.start_tls(*args, **kwargs))

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            if (left := getattr(deadline, "at", math.inf) - time.monotonic()) <= 0:
                raise httpcore2.ReadTimeout(f"reply not complete after {deadline.seconds:g} s")
            return self.inner.read(max_bytes, left if timeout is None else min(timeout, left))

    http = client._client  # its default transport and any proxy's (HTTP(S)_PROXY: the SDK trusts the env)
    for transport in [http._transport, *(mount for mount in http._mounts.values() if mount is not None)]:
        if getattr(transport.handle_request, "bounded", False):
            continue
        transport._pool._network_backend = Capped(transport._pool._network_backend)
        transport.handle_request = _bounded(transport.handle_request, deadline, seconds)


def _bounded(handle: Any, deadline: Any, seconds: float) -> Any:
    """``handle`` (a transport's ``handle_request``) setting its thread's reply deadline first."""

    def bounded(request: Any) -> Any:
        read = (request.extensions.get("timeout") or {}).get("read")
        deadline.seconds = seconds if read is None else min(seconds, read)
        deadline.at = time.monotonic() + deadline.seconds  # the body is read after it returns, in this thread
        return handle(request)

    bounded.bounded = True  # type: ignore[attr-defined]
    return bounded
