"""Ending quietly when the reader of stdout goes away (`lmms-eval-tasks ... | head`, `lmms_eval ... | head`),
for the ``lmms-eval-tasks`` command (``cli/``) and the ``lmms_eval`` launcher (``host/launcher.py``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any


class _ClosedPipeGuard:
    """stdout as seen by everything that writes to it (print, the host's loguru sink): once the reader has
    gone (``| head``), further output goes to /dev/null instead of raising in every writer."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.closed_early = False

    def write(self, text: str) -> int:
        if not self.closed_early:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._close()
        return len(text)

    def flush(self) -> None:
        if not self.closed_early:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._close()

    def _close(self) -> None:
        self.closed_early = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def end_quietly_on_closed_pipe(entry: Callable[[], int | None]) -> int:
    """``entry()``'s exit code; 141 (the shell's code for SIGPIPE) without a traceback when stdout was
    closed early (``lmms_eval ... | head``)."""
    guard = _ClosedPipeGuard(sys.stdout)
    sys.stdout = guard
    try:
        code = int(entry() or 0)
        guard.flush()
        return 141 if guard.closed_early else code
    except BrokenPipeError:
        guard._close()  # Python flushes stdout again at exit: /dev/null takes that flush quietly
        return 141
