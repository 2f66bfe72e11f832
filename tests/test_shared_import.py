"""`make demo`'s shared host import (lmms_eval_tasks/host/speedups/shared_import.py) leaves nothing behind: a
model run forked from it ends when the process that started it ends (killed demo, killed shared import)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO_ROOT

# A parent that forks a child calling die_with_parent(), prints the child's pid at once (the test may kill
# the parent before the child's request: that is caught too), then waits.
PARENT = """
import os, sys, time
from lmms_eval_tasks.host.speedups.shared_import import die_with_parent
parent = os.getpid()
pid = os.fork()
if pid == 0:
    die_with_parent(parent)
    time.sleep(120)
    os._exit(0)
print(pid, flush=True)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie child of init is reaped quickly; /proc's state says 'Z')."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("kill_with", [signal.SIGKILL, signal.SIGTERM])
def test_a_forked_run_ends_when_its_parent_is_killed(kill_with: signal.Signals) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.send_signal(kill_with)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the forked run outlived its parent"
    finally:
        parent.kill()
        parent.wait()
