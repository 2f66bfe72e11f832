"""Several `python -m lmms_eval_tasks ARGS` runs that share one import of the host (used by `make demo`).

Importing the host's CLI (torch, transformers, datasets, lmms-eval) is 10-15 s of CPU per process once its
bytecode is compiled, and much more on a fresh install; two runs side by side paid it twice. This process
imports it once, then forks one child per run; each child becomes exactly what `python -m lmms_eval_tasks
ARGS` would be from there on (its log file as stdout and stderr, fresh random states, a fresh `__main__`
run of the launcher, the interpreter's normal exit). The children are separate processes that run side by
side; only the import is shared. tests/warm_launcher.py does the same for the test suite, one run at a time.

usage: python -m lmms_eval_tasks.host.speedups.shared_import RUNS_JSON
RUNS_JSON is a file holding [{"label", "argv", "log"}, ...]; the environment is this process's, so the
caller starts it in the runs' environment. One JSON line per finished run on stdout:
{"label", "exit_code", "seconds", "cpu_seconds"} (``exit_code`` negative: killed by that signal), then
{"import_seconds", "import_cpu_seconds"}, the shared import's cost.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
from typing import Any

# What `python -m lmms_eval_tasks` imports from the host on every run (host/launcher.py, host/patches.py).
HOST_MODULES = (
    "lmms_eval.__main__",
    "lmms_eval.cli.dispatch",
    "lmms_eval.evaluator",
    "lmms_eval.tasks",
    "lmms_eval.api.task",
)


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel send this process SIGTERM when its parent ends (Linux; elsewhere nothing), so a
    killed demo or shared-import process leaves no model run behind (the launcher ends cleanly on SIGTERM).
    ``parent``: the parent's pid as the parent saw it before forking (else the current parent's): a parent
    that ended before the request was made is caught too."""
    import ctypes
    import signal

    parent = os.getppid() if parent is None else parent
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: no such call
        return
    if os.getppid() != parent:  # the parent ended before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def import_host() -> str:
    """Import the host with fd 1 and 2 sent to a temporary file; returns what the import printed."""
    import importlib
    import tempfile

    saved = [os.dup(1), os.dup(2)]
    target, capture_path = tempfile.mkstemp(prefix="lmms_eval_tasks_import_", suffix=".log")
    for fd in (1, 2):
        os.dup2(target, fd)
    os.close(target)
    try:
        for module in HOST_MODULES:
            importlib.import_module(module)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved_fd in zip((1, 2), saved, strict=True):
            os.dup2(saved_fd, fd)
            os.close(saved_fd)
    try:
        with open(capture_path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    finally:
        os.unlink(capture_path)


def _reseed() -> None:
    """Fresh random states, as a cold process has (`random` reseeds itself after a fork; these do not)."""
    if "numpy" in sys.modules:
        import numpy

        numpy.random.seed(int.from_bytes(os.urandom(4), "little"))
    if "torch" in sys.modules:
        import torch

        torch.seed()


def become_the_launcher(argv: list[str], log_path: str, printed: str) -> None:
    """Turn this forked child into `python -m lmms_eval_tasks ARGV`, its output (stdout and stderr) into
    ``log_path`` after what the shared import printed. Returns when the run returns (it usually exits)."""
    import runpy

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    target = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for fd in (1, 2):
        os.dup2(target, fd)
    os.close(target)
    if printed:
        os.write(1, printed.encode("utf-8"))
    sys.path[0] = os.getcwd()  # what `python -m` puts first
    _reseed()
    sys.argv = ["-m", *argv]  # runpy sets argv[0] to the module's file, as `python -m` does
    runpy.run_module("lmms_eval_tasks", run_name="__main__", alter_sys=True)


def run_all(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Import the host, fork a child per run and report each as it ends (one JSON line on stdout). In a
    child, returns its run (the caller becomes the launcher); in this process, returns None at the end."""
    began, cpu_began = time.perf_counter(), _cpu_seconds()
    printed = import_host()
    imported = {
        "import_seconds": round(time.perf_counter() - began, 1),
        "import_cpu_seconds": round(_cpu_seconds() - cpu_began, 1),
    }
    # The host's import leaves about a million objects the cyclic garbage collector tracks; each child's
    # collections (the one at its exit at the latest) would walk them and write to every one's header, copying
    # each page of the shared import into the child (~1.3 s of CPU per child). Frozen before forking (what
    # the gc module's documentation advises), they stay out of the children's collections.
    gc.collect()
    gc.freeze()
    children: dict[int, tuple[dict[str, Any], float]] = {}
    this_process = os.getpid()
    for run in runs:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            die_with_parent(parent=this_process)
            return {**run, "printed": printed}
        children[pid] = (run, time.perf_counter())
    while children:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in children:
            continue
        run, started = children.pop(pid)
        record = {
            "label": run["label"],
            "exit_code": os.waitstatus_to_exitcode(status),
            "seconds": round(time.perf_counter() - started, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        }
        print(json.dumps(record), flush=True)
    print(json.dumps(imported), flush=True)
    return None


def main(argv: list[str] | None = None) -> None:
    die_with_parent()  # the demo that started it ends: so does it, and so do its runs
    [runs_path] = argv if argv is not None else sys.argv[1:]
    with open(runs_path, encoding="utf-8") as handle:
        runs = json.load(handle)
    child = run_all(runs)
    if child is not None:
        become_the_launcher(child["argv"], child["log"], child["printed"])


if __name__ == "__main__":
    main()
