"""One circuit breaker for every endpoint the pack calls (judge and model server), and the ``Retry-After``
reading that paces rate-limited calls: a dead or hung endpoint must not cost hours of retries.
"""

from __future__ import annotations

import email.utils
import threading
import time
from typing import Any

RETRY_AFTER_CAP_SECONDS = 300.0  # a larger Retry-After is clipped


class CircuitBreaker:
    """Opens, with no success in between, after ``threshold`` failed items in a row of one kind (a new kind
    starts the count again; ``kind`` None matches any), after ``3 * threshold`` failed attempts, or when only
    timed-out attempts came back for ``hung_after`` seconds (one request's bound), a request first sent after
    the first of them included: a hung endpoint however few requests are in flight, where a few slow requests
    retried alone are not. A 429 is no failed attempt (alive, waiting). ``threshold`` 0 never opens."""

    def __init__(self, threshold: int, hung_after: float = 0.0) -> None:
        self.threshold, self.hung_after = threshold, hung_after
        self._lock = threading.Lock()
        self._failed_items = self._failed_attempts = 0
        self._silence: tuple[float, float] | None = None  # (first sent, first seen) of the timeouts in a row
        self._hung = False
        self._kind: Any = None
        self.last_error: str | None = None
        self.stop = threading.Event()  # set: no further attempts; retries waiting on it wake at once
        self.answers: Any = lambda: False  # whether the endpoint replies to a probe (then some requests hang)

    @property
    def tripped(self) -> str | None:
        """The rule that opened the breaker: "hung", "items" or "attempts" (None: closed or stopped)."""
        with self._lock:
            if self.threshold <= 0:
                return None
            if self._hung:
                return "hung"
            if self._failed_items >= self.threshold:
                return "items"
            return "attempts" if self._failed_attempts >= 3 * self.threshold else None

    @property
    def open(self) -> bool:
        return self.stop.is_set() or self.tripped is not None

    def success(self) -> None:
        with self._lock:
            self._failed_items = self._failed_attempts = 0
            self._silence, self._hung = None, False

    def failed_attempt(self, error: str, sent: float | None = None, first: bool = False) -> None:
        """A failed attempt; ``sent``: when, if it timed out; ``first``: its request's first attempt."""
        with self._lock:
            self._failed_attempts += 1
            self.last_error = error
            if sent is None:
                self._silence = None
                return
            now = time.monotonic()
            since, seen = self._silence or (sent, now)
            self._silence = (min(since, sent), seen)
            fresh = first and sent > seen  # a new request failed too, not only retries of slow ones
            hung = fresh and 0 < self.hung_after <= now - self._silence[0]
        if hung and not self.answers():
            with self._lock:
                self._hung = self._silence is not None  # no success while the probe waited

    def failed_item(self, error: str, kind: Any = None) -> None:
        with self._lock:
            same = kind is None or self._kind is None or kind == self._kind
            self._failed_items = self._failed_items + 1 if same else 1
            self._kind = kind
            self.last_error = error


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date), or None."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            if name != "retry-after":
                continue
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):
                continue
            seconds = parsed.timestamp() - time.time()
        if seconds != seconds or seconds < 0:  # NaN or in the past
            return 0.0
        return min(seconds, RETRY_AFTER_CAP_SECONDS)
    return None
