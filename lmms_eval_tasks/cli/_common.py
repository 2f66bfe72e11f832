"""Argument and output helpers shared by the subcommand modules."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any


def parse_option(text: str) -> tuple[str, Any]:
    """Parse a `key=value` option; values are JSON when they parse as JSON, else strings."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def json_safe(value: Any) -> Any:
    """Replace NaN/inf (metrics that cannot be computed on this input) with null: strict JSON for readers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


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
        # Python flushes stdout again at exit: point it at /dev/null so that flush cannot fail loudly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
