"""Several `python -m lmms_eval_tasks ARGS` runs share one import of the host (10-15 s of CPU each), each
run a forked child (`make demo`, the tests' warm launcher). Usage: `python -m <this module> RUNS_JSON`
([{"label", "argv", "log"}, ...]); prints a JSON line per finished run, then the import's cost."""

from __future__ import annotations

import gc
import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
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
    """SIGTERM to this process when its parent ends (Linux), so a killed demo leaves no run behind;
    ``parent``: its pid as seen before forking (one that ended before the request counts too)."""
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


def import_host(stdout_path: str, stderr_path: str) -> tuple[str, str]:
    """Import ``HOST_MODULES`` with fd 1 and 2 sent to these files, then freeze the imported objects out of
    the garbage collector; returns what each file received ("" for stderr when both are one file)."""
    import importlib

    saved = [os.dup(1), os.dup(2)]
    _send_output(stdout_path, stderr_path, 0o600)
    try:
        for module in HOST_MODULES:
            importlib.import_module(module)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved_fd in zip((1, 2), saved, strict=True):
            os.dup2(saved_fd, fd)
            os.close(saved_fd)
    # ~1 million objects the collector tracks: a forked child's collections would write to each one's header,
    # copying every shared page (~1.3 s of CPU per child). Frozen before forking (as the gc docs advise).
    gc.collect()
    gc.freeze()
    paths = dict.fromkeys((stdout_path, stderr_path))  # one path: one file for both
    texts = [Path(path).read_text(encoding="utf-8", errors="replace") for path in paths]
    return texts[0], texts[1] if len(texts) > 1 else ""


def _send_output(stdout_path: str, stderr_path: str, mode: int) -> None:
    """fd 1 and 2 to these files, created empty (one path: one file for both, as Popen(stderr=STDOUT))."""
    for fd, path in ((1, stdout_path), (2, stderr_path)):
        if fd == 2 and path == stdout_path:
            os.dup2(1, 2)
        else:
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            os.dup2(target, fd)
            os.close(target)


def become_a_fresh_process(stdout_path: str, stderr_path: str, printed: Sequence[str] = ("", "")) -> None:
    """In a forked child: stdin from /dev/null, fd 1 and 2 to these files starting with what the shared
    import ``printed`` on each, and fresh random states, as a cold process has them."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    _send_output(stdout_path, stderr_path, 0o644)
    for fd, text in zip((1, 2), printed, strict=True):
        if text:
            os.write(fd, text.encode("utf-8"))
    if "numpy" in sys.modules:  # `random` reseeds itself after a fork; these do not
        import numpy

        numpy.random.seed(int.from_bytes(os.urandom(4), "little"))
    if "torch" in sys.modules:
        import torch

        torch.seed()


def run_the_launcher(argv: Sequence[str]) -> None:
    """Run `python -m lmms_eval_tasks ARGV` in this process (it usually exits)."""
    import runpy

    sys.path[0] = os.getcwd()  # what `python -m` puts first
    sys.argv = ["-m", *argv]  # runpy sets argv[0] to the module's file, as `python -m` does
    runpy.run_module("lmms_eval_tasks", run_name="__main__", alter_sys=True)


def run_all(runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Import the host, fork a child per run and report each as it ends (one JSON line on stdout). In a
    child, returns its run with what the import printed; in this process, returns None at the end."""
    import tempfile

    began, cpu_began = time.perf_counter(), _cpu_seconds()
    handle, capture = tempfile.mkstemp(prefix="lmms_eval_tasks_import_", suffix=".log")
    os.close(handle)
    try:
        printed, _ = import_host(capture, capture)
    finally:
        os.unlink(capture)
    imported = {
        "import_seconds": round(time.perf_counter() - began, 1),
        "import_cpu_seconds": round(_cpu_seconds() - cpu_began, 1),
    }
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
        become_a_fresh_process(child["log"], child["log"], (child["printed"], ""))
        run_the_launcher(child["argv"])


if __name__ == "__main__":
    main()
