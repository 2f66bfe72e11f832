"""A warm `python -m lmms_eval_tasks` for the test suite: the host's import paid once per test worker.

Importing the host's CLI (torch, transformers, datasets, lmms-eval) costs 10-15 s of CPU, most of a launcher
run in the tests. This process imports it once, then, per request, forks a child that becomes exactly what
`python -m lmms_eval_tasks ARGS` would be from there on: the request's environment, working directory,
stdout/stderr files and arguments, a fresh `__main__` run of the launcher (the pack's modules other than the
two the host's entry points load are imported by the child), the interpreter's normal exit (atexit
handlers, thread joins, exit status). The child is a real separate process; only the host's import is
shared. tests/helpers.py `run_launcher` decides when this may stand in for a cold start (same environment
apart from the pack's own `LMMS_EVAL_TASKS_*` variables, which nothing imported here reads) and starts it.

Protocol on stdin/stdout, one JSON object per line: the server says {"ready": ...} once the host is
imported (with whatever the import printed, replayed at the start of each child's output), then for each
request {"argv", "env", "cwd", "stdout", "stderr"} answers {"pid": N} at once and {"status": code} when the
child has ended (negative: killed by that signal).
"""

from __future__ import annotations

import json
import os
import sys

# What `python -m lmms_eval_tasks` imports from the host on every run (host/launcher.py, host/patches.py).
PRELOAD = (
    "lmms_eval.__main__",
    "lmms_eval.cli.dispatch",
    "lmms_eval.evaluator",
    "lmms_eval.tasks",
    "lmms_eval.api.task",
)


def _preload(capture_dir: str) -> tuple[str, str]:
    """Import the host with fd 1 and 2 sent to files; returns what the import printed on each."""
    import importlib

    paths = (os.path.join(capture_dir, "preload.out"), os.path.join(capture_dir, "preload.err"))
    saved = [os.dup(1), os.dup(2)]
    for fd, path in zip((1, 2), paths, strict=True):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    try:
        for module in PRELOAD:
            importlib.import_module(module)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved_fd in zip((1, 2), saved, strict=True):
            os.dup2(saved_fd, fd)
            os.close(saved_fd)
    printed = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            printed.append(handle.read())
    return printed[0], printed[1]


def _serve(requests, replies) -> dict | None:
    """Fork one child per request; the child returns its request, the server returns None at end of input."""
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            return request
        replies.write(json.dumps({"pid": pid}) + "\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")
        replies.flush()
    return None


def _become_the_launcher(request: dict, printed: tuple[str, str]) -> None:
    """Turn this forked child into `python -m lmms_eval_tasks ARGV` in the request's cwd and environment."""
    import runpy

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path, text in zip((1, 2), (request["stdout"], request["stderr"]), printed, strict=True):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
        if text:
            os.write(fd, text.encode("utf-8"))
    sys.path[0] = os.getcwd()  # what `python -m` puts first
    _reseed()
    sys.argv = ["-m", *request["argv"]]  # runpy sets argv[0] to the module's file, as `python -m` does
    runpy.run_module("lmms_eval_tasks", run_name="__main__", alter_sys=True)


def _reseed() -> None:
    """Fresh random states, as a cold process has (`random` reseeds itself after a fork; these do not)."""
    if "numpy" in sys.modules:
        import numpy

        numpy.random.seed(int.from_bytes(os.urandom(4), "little"))
    if "torch" in sys.modules:
        import torch

        torch.seed()


def main() -> None:
    sys.path[0] = os.getcwd()  # not tests/ (this file's folder): the host imports as under `python -m`
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    printed = _preload(sys.argv[1])
    pack_loaded = sorted(name for name in sys.modules if name.startswith("lmms_eval_tasks"))
    replies.write(json.dumps({"ready": True, "pack_modules": pack_loaded}) + "\n")
    replies.flush()
    request = _serve(requests, replies)
    if request is not None:
        _become_the_launcher(request, printed)


# ---- the client side, used by tests/helpers.py `run_launcher` (one server per test process) ----

COLD_ENV = "LMMS_EVAL_TASKS_TESTS_COLD_LAUNCHER"  # set to 1: every launcher run starts cold (for comparison)
# Variables that may differ from the server's: the pack's own (the server imports none of the pack modules
# that read them) and the OpenAI ones, which the host modules imported here read only when called (checked
# on lmms-eval 0.7.3: no module-level read; torch, transformers and datasets do not read them).
# PYTEST_CURRENT_TEST names the running test (pytest sets it per test; nothing imported here reads it).
_MAY_DIFFER = (
    "LMMS_EVAL_TASKS_",
    "OPENAI_API_KEY",
    "OPENAI_API_URL",
    "OPENAI_BASE_URL",
    "PYTEST_CURRENT_TEST",
)


def _signature(environment: dict[str, str]) -> dict[str, str]:
    """The part of an environment the host's import may read (everything but the pack's own variables)."""
    return {name: value for name, value in environment.items() if not name.startswith(_MAY_DIFFER)}


class WarmLauncher:
    """A running server (see the module docstring) and the environment it imported the host in."""

    def __init__(self, environment: dict[str, str], cwd: str) -> None:
        import subprocess
        import tempfile

        self.folder = tempfile.mkdtemp(prefix="warm-launcher-")
        self.signature = _signature(environment)
        self.cwd = cwd
        log = open(os.path.join(self.folder, "server.log"), "w", encoding="utf-8")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), self.folder],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=environment,
            cwd=cwd,
            text=True,
        )
        log.close()
        ready = self._reply(timeout=900)
        self.usable = bool(ready and ready.get("ready"))
        self.runs = 0

    def _reply(self, timeout: float | None) -> dict | None:
        import select

        assert self.process.stdout is not None
        if timeout is not None and not select.select([self.process.stdout], [], [], timeout)[0]:
            return None
        line = self.process.stdout.readline()
        return json.loads(line) if line else None

    def accepts(self, environment: dict[str, str], cwd: str) -> bool:
        """True when a cold start in ``environment`` would import the host as this server did."""
        return (
            self.usable
            and self.process.poll() is None
            and _signature(environment) == self.signature
            and "LMMS_EVAL_PLUGINS" not in environment  # the pack's plugin note depends on import order
        )

    def run(self, arguments: list[str], environment: dict[str, str], cwd: str, timeout: float):
        """`python -m lmms_eval_tasks ARGUMENTS` in a forked child, returned as subprocess.run returns it."""
        import signal
        import subprocess
        import tempfile

        assert self.process.stdin is not None
        self.runs += 1
        global served_runs
        served_runs += 1
        with tempfile.TemporaryDirectory(dir=self.folder) as folder:
            outputs = {name: os.path.join(folder, name) for name in ("stdout", "stderr")}
            request = {"argv": list(arguments), "env": dict(environment), "cwd": cwd, **outputs}
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            started = self._reply(timeout=60)
            if started is None:
                raise RuntimeError(f"the warm launcher did not start a run: {self.log_tail()}")
            status = self._reply(timeout=timeout)
            if status is None:
                os.kill(started["pid"], signal.SIGKILL)
                self._reply(timeout=60)
            texts = {}
            for name, path in outputs.items():
                with open(path, encoding="utf-8", errors="replace") as handle:
                    texts[name] = handle.read()
        command = [sys.executable, "-m", "lmms_eval_tasks", *arguments]
        if status is None:
            raise subprocess.TimeoutExpired(command, timeout, output=texts["stdout"], stderr=texts["stderr"])
        return subprocess.CompletedProcess(command, status["status"], texts["stdout"], texts["stderr"])

    def log_tail(self) -> str:
        with open(os.path.join(self.folder, "server.log"), encoding="utf-8", errors="replace") as handle:
            return handle.read()[-3000:]

    def close(self) -> None:
        import shutil

        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except Exception:  # noqa: BLE001 - a server that does not stop is killed
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


_servers: dict[str, WarmLauncher] = {}
served_runs = 0  # runs served warm by this process's servers, closed ones included
MAX_SERVERS = 3  # per test process, each for one environment (about 0.4 GB each)


def warm_launcher(environment: dict[str, str], cwd: str) -> WarmLauncher | None:
    """This process's server for ``environment`` (started on first use), else None (the run starts cold).

    A server is started in the environment of the first run that asks for one, and serves the runs whose
    environment the host's import would read the same way; the environment of a test worker changes as
    libraries it imports set variables (cv2, OpenMP), so a few servers are kept, one per such environment.
    """
    if os.environ.get(COLD_ENV) == "1" or environment.get(COLD_ENV) == "1":
        return None
    key = json.dumps(_signature(environment), sort_keys=True)
    server = _servers.pop(key, None)
    if server is None:
        if len(_servers) >= MAX_SERVERS:  # the least recently used gives way (one-off environments age out)
            _servers.pop(next(iter(_servers))).close()
        import atexit

        server = WarmLauncher(environment, cwd)
        atexit.register(server.close)
    _servers[key] = server  # the most recently used last
    return server if server.accepts(environment, cwd) else None


if __name__ == "__main__":
    main()
