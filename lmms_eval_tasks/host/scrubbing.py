"""The host's console and files scrubbed of secrets (``judges.redact.scrub``): lmms-eval prints and writes
``--model_args`` (``api_key=...``) verbatim."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

_LINE_ENDS = ("\n", "\r")


class ScrubbedStream:
    """A text stream that writes each completed line (``\\n`` or ``\\r``) of what it is given, scrubbed."""

    def __init__(self, stream: TextIO) -> None:
        from lmms_eval_tasks.judges.redact import scrub

        self._stream = stream
        self._pending = ""
        self._lock = threading.Lock()
        # bound now: a host progress bar still held at interpreter exit writes from its __del__, when no
        # import works (its ImportError traceback was the run's last line, after the cause); that is dropped
        self._scrub, self._finalizing = scrub, sys.is_finalizing

    def write(self, text: str) -> int:
        if self._finalizing():
            return len(text)
        with self._lock:
            self._pending += text
            cut = max(self._pending.rfind(end) for end in _LINE_ENDS)
            if cut >= 0:
                done, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
                self._stream.write(self._scrub(done))
        return len(text)

    def flush(self) -> None:
        if self._finalizing():
            return
        with self._lock:
            if self._pending:
                self._stream.write(self._scrub(self._pending))
                self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding...: the real stream's
        return getattr(self._stream, name)


def _scrub_record(record: dict[str, Any]) -> None:
    from lmms_eval_tasks.judges.redact import scrub

    record["message"] = scrub(record["message"])


@contextmanager
def scrubbed_console() -> Iterator[None]:
    """stdout, stderr and loguru messages scrubbed of secrets for the duration of the block."""
    from loguru import logger

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(saved[0]), ScrubbedStream(saved[1])
    logger.configure(patcher=_scrub_record)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):  # a closed pipe: nothing more can be shown
                stream.flush()
        sys.stdout, sys.stderr = saved
        logger.configure(patcher=lambda record: None)


def scrub_files(paths: Iterable[Path]) -> list[Path]:
    """Rewrite each file (line by line, atomically) without the secrets ``scrub`` finds; the files changed."""
    from lmms_eval_tasks.judges.redact import scrub_lines

    changed = []
    for path in dict.fromkeys(Path(path) for path in paths):
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as handle:
                lines = handle.readlines()
        except OSError:
            continue  # a file the host did not write is reported by host_output_problems
        clean = scrub_lines(lines)
        if clean == lines:
            continue
        temporary = path.with_name(f".{path.name}.scrubbed")
        with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.writelines(clean)
        os.replace(temporary, path)
        changed.append(path)
    return changed
