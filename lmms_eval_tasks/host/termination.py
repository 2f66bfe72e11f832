"""SIGTERM ends a run like Ctrl-C, as an exception so every ``finally`` runs (exit status 143), and
``GRACE_ENV`` seconds later the process ends anyway (a request hung on a model server would hold the exit)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from functools import partial
from typing import Any

from lmms_eval_tasks import environment

TERMINATED_EXIT = 128 + signal.SIGTERM
GRACE_ENV = "LMMS_EVAL_TASKS_SIGTERM_GRACE"  # cleanup seconds after SIGTERM before the process ends anyway
DEFAULT_GRACE_S = 20  # under the 30 s a scheduler (SLURM's KillWait) usually gives before SIGKILL


class Terminated(SystemExit):
    """The run received SIGTERM (a ``SystemExit``: the host's ``except Exception`` blocks let it pass)."""

    def __init__(self) -> None:
        super().__init__(TERMINATED_EXIT)

    def __str__(self) -> str:
        return "terminated by SIGTERM"


def _end_after_grace(grace: int) -> None:
    time.sleep(grace)
    print(
        f"lmms_eval: terminated by SIGTERM; still waiting {grace} s later (a request to a model server), "
        "ending now; answers stored so far are kept in the response cache (--use_cache)",
        file=sys.stderr,
        flush=True,
    )
    os._exit(TERMINATED_EXIT)


def _raise_terminated(grace: int, signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    threading.Thread(target=_end_after_grace, args=(grace,), name="sigterm-grace", daemon=True).start()
    raise Terminated()


def end_on_sigterm_with_cleanup() -> bool:
    """Install the SIGTERM handler (main thread only; True when installed, False elsewhere)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    grace = environment.integer(GRACE_ENV, DEFAULT_GRACE_S, 0)  # read now: a bad value fails at start
    signal.signal(signal.SIGTERM, partial(_raise_terminated, grace))
    return True
