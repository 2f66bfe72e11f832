"""Work slots a thread gives back while it waits for a result another thread computes (a payload builder of
``models/openai_pipelined.py`` waiting for an image a neighbour encodes)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

_held = threading.local()


@contextmanager
def holding(slots: threading.Semaphore) -> Iterator[None]:
    """Run the block with one of ``slots`` held by this thread (given back by ``wait_for`` while waiting)."""
    slots.acquire()
    _held.slots = slots
    try:
        yield
    finally:
        _held.slots = None
        slots.release()


def wait_for(future: Future) -> Any:
    """``future.result()``; the calling thread's slot, if it holds one, is free for others meanwhile."""
    slots = getattr(_held, "slots", None)
    if slots is None or future.done():
        return future.result()
    slots.release()
    try:
        return future.result()
    finally:
        slots.acquire()
