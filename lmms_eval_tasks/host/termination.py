"""SIGTERM ends a run like Ctrl-C: as an exception, so every ``finally`` runs (no half-written report is left;
the pending marker says the run was interrupted); the exit status stays 143 (128 + SIGTERM).
"""

from __future__ import annotations

import signal
import threading
from typing import Any

TERMINATED_EXIT = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """The run received SIGTERM (a ``SystemExit``: the host's ``except Exception`` blocks let it pass)."""

    def __init__(self) -> None:
        super().__init__(TERMINATED_EXIT)

    def __str__(self) -> str:
        return "terminated by SIGTERM"


def _raise_terminated(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise Terminated()


def end_on_sigterm_with_cleanup() -> bool:
    """Install the SIGTERM handler (main thread only; True when installed, False elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(signal.SIGTERM, _raise_terminated)
    return True
