"""Each image corrupted once per level for all its questions: a bounded, thread-safe memo (one PIL object
per image and level, so clients caching encodings by object encode it once; docs/vrb.md)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework.work_slots import wait_for

MEMO_ENV = "LMMS_EVAL_TASKS_VRB_IMAGE_MEMO"
DEFAULT_ITEMS = 64


class ImageMemo:
    """``get(key, make)``: ``make()`` once per key while the key stays among the ``items`` most recent."""

    def __init__(self, items: int) -> None:
        self.items = items
        self._entries: OrderedDict[Hashable, Future] = OrderedDict()
        self._lock = threading.Lock()
        self.computed = 0

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        if self.items <= 0:
            return make()
        with self._lock:
            future = self._entries.get(key)
            owner = future is None
            if owner:
                future = Future()
                self._entries[key] = future
                while len(self._entries) > self.items:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        if owner:
            try:
                future.set_result(make())
                with self._lock:
                    self.computed += 1
            except BaseException as error:
                future.set_exception(error)
                with self._lock:
                    if self._entries.get(key) is future:
                        del self._entries[key]
            return future.result()
        return wait_for(future)  # computed by another thread: a build slot held here is free meanwhile


_memo: ImageMemo | None = None
_memo_lock = threading.Lock()


def shared_memo() -> ImageMemo:
    """The process's memo (built on first use, with the capacity the environment gives)."""
    global _memo
    with _memo_lock:
        if _memo is None:
            _memo = ImageMemo(environment.integer(MEMO_ENV, DEFAULT_ITEMS, 0))
        return _memo
