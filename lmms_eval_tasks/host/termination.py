"""SIGTERM ends a run like Ctrl-C, as an exception so every ``finally`` runs (exit status 143), and
``GRACE_S`` later the process ends anyway (a request hung on a model server would hold the exit)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

TERMINATED_EXIT = 128 + signal.SIGTERM
GRACE_S = 20.0  # cleanup time after SIGTERM before the process ends whatever still waits


class Terminated(SystemExit):
    """The run received SIGTERM (a ``SystemExit``: the host's ``except Exception`` blocks let it pass)."""

    def __init__(self) -> None:
        super().__init__(TERMINATED_EXIT)

    def __str__(self) -> str:
        return "terminated by SIGTERM"


def _end_after_grace() -> None:
    time.sleep(GRACE_S)
    print(
        f"lmms_eval: terminated by SIGTERM; still waiting {GRACE_S:g} s later (a request to a model server), "
        "ending now; answers stored so far are kept in the response cache (--use_cache)",
        file=sys.stderr,
        flush=True,
    )
    os._exit(TERMINATED_EXIT)


def _raise_terminated(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    threading.Thread(target=_end_after_grace, name="sigterm-grace", daemon=True).start()
    raise Terminated()


def end_on_sigterm_with_cleanup() -> bool:
    """Install the SIGTERM handler (main thread only; True when installed, False elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(signal.SIGTERM, _raise_terminated)
    return True
