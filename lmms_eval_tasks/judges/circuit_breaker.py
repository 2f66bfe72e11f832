"""One circuit breaker for every endpoint the pack calls (judge and model server), and the ``Retry-After``
reading that paces rate-limited calls: a dead or hung endpoint must not cost hours of retries, so N failed
items in a row failing the same way (or 3N failed attempts) open it; a 429 does not count (alive, waiting).
"""

from __future__ import annotations

import email.utils
import threading
import time
from typing import Any

RETRY_AFTER_CAP_SECONDS = 300.0  # a larger Retry-After is clipped


class CircuitBreaker:
    """Opens after ``threshold`` consecutive failed items of one kind (a different kind starts the count
    again; ``kind`` None matches any), or ``3 * threshold`` failed attempts, with no success in between.
    ``threshold`` 0 never opens. Thread-safe."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self._lock = threading.Lock()
        self._failed_items = 0
        self._failed_attempts = 0
        self._kind: Any = None
        self.last_error: str | None = None
        self._cancelled = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop all jobs: no further attempts, and sleeping retries wake up at once."""
        self._cancelled.set()

    def sleep(self, seconds: float) -> None:
        """Wait before a retry, waking early if the run is cancelled."""
        self._cancelled.wait(seconds)

    @property
    def items_tripped(self) -> bool:
        """Whether failed items (not the ``3 * threshold`` failed attempts) opened the breaker."""
        return self._failed_items >= self.threshold

    @property
    def open(self) -> bool:
        with self._lock:
            tripped = self._failed_items >= self.threshold or self._failed_attempts >= 3 * self.threshold
            return self.cancelled or (self.threshold > 0 and tripped)

    def success(self) -> None:
        with self._lock:
            self._failed_items = 0
            self._failed_attempts = 0

    def failed_attempt(self, error: str) -> None:
        with self._lock:
            self._failed_attempts += 1
            self.last_error = error

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
