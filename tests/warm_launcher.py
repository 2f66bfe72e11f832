"""A warm `python -m lmms_eval_tasks` for the test suite: the host's import paid once per test worker.

Importing the host's CLI (torch, transformers, datasets, lmms-eval) costs 10-15 s of CPU, most of a launcher
run in the tests. This process imports it once, then, per request, forks a child that becomes exactly what
`python -m lmms_eval_tasks ARGS` would be from there on: the request's environment, working directory,
stdout/stderr files and arguments, a fresh `__main__` run of the launcher (the pack's modules other than the
two the host's entry points load and `host/speedups/shared_import.py`, whose functions do all this for `make
demo` too, are imported by the child), the interpreter's normal exit (atexit handlers, thread joins, exit
status). The child is a real separate process; only the host's import is shared. tests/helpers.py
`run_launcher` decides when this may stand in for a cold start (same environment apart from the pack's own
`LMMS_EVAL_TASKS_*` variables, which nothing imported here reads) and starts it.

Protocol on stdin/stdout, one JSON object per line: the server says {"ready": ...} once the host is
imported (with whatever the import printed, replayed at the start of each child's output), then for each
request {"argv", "env", "cwd", "stdout", "stderr"} answers {"pid": N} at once and {"status": code, "cpu": s}
when the child has ended (negative: killed by that signal; cpu: the child's user + system seconds). A
request may carry "code" instead of a module: the child runs it as `python -c CODE ARGV` would.

`WarmLauncher.start` hands a run back as a process the test can signal and wait on (`WarmRun`, the part of
subprocess.Popen the tests use): the child is a real process, so a SIGKILL or SIGTERM sent to it is what
it is to a cold `python -m lmms_eval_tasks` (its default actions, the launcher's own handlers).
"""

from __future__ import annotations

import json
import os
import sys


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
        _, status, usage = os.wait4(pid, 0)
        ended = {"status": os.waitstatus_to_exitcode(status), "cpu": usage.ru_utime + usage.ru_stime}
        replies.write(json.dumps(ended) + "\n")
        replies.flush()
    return None


def _become_the_run(request: dict, printed: tuple[str, str]) -> None:
    """Turn this forked child into `python -m lmms_eval_tasks ARGV` (or `python -c CODE ARGV`) in the
    request's cwd and environment."""
    from lmms_eval_tasks.host.speedups.shared_import import become_a_fresh_process, run_the_launcher

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    become_a_fresh_process(request["stdout"], request["stderr"], printed)
    sys.path[1:1] = request.get("path_prefix") or []  # PYTHONPATH entries before the server's own
    if request.get("code") is None:
        run_the_launcher(request["argv"])
        return
    sys.path[0] = ""  # `python -c CODE ARGV`: '' first on sys.path, argv[0] '-c'
    sys.argv = ["-c", *request["argv"]]
    import builtins

    main = sys.modules["__main__"]
    main.__dict__.clear()
    main.__dict__.update({"__name__": "__main__", "__builtins__": builtins, "__doc__": None})
    exec(compile(request["code"], "<string>", "exec"), main.__dict__)  # noqa: S102 - the test's program


def main() -> None:
    sys.path[0] = os.getcwd()  # not tests/ (this file's folder): the host imports as under `python -m`
    from lmms_eval_tasks.host.speedups.shared_import import import_host

    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    printed = import_host(os.path.join(sys.argv[1], "preload.out"), os.path.join(sys.argv[1], "preload.err"))
    pack_loaded = sorted(name for name in sys.modules if name.startswith("lmms_eval_tasks"))
    top_level = sorted({name.split(".")[0] for name in sys.modules})
    replies.write(json.dumps({"ready": True, "pack_modules": pack_loaded, "top_level": top_level}) + "\n")
    replies.flush()
    request = _serve(requests, replies)
    if request is not None:
        _become_the_run(request, printed)


# ---- the client side, used by tests/helpers.py `run_launcher` (one server per test process) ----

COLD_ENV = "LMMS_EVAL_TASKS_TESTS_COLD_LAUNCHER"  # set to 1: every launcher run starts cold (for comparison)
# Variables that may differ from the server's: the pack's own (the server imports none of the pack modules
# that read them) and the OpenAI ones, which the host modules imported here read only when called (checked
# on lmms-eval 0.7.3: no module-level read; torch, transformers and datasets do not read them).
# PYTEST_CURRENT_TEST names the running test (pytest sets it per test; nothing imported here reads it).
# The host's response cache reads LMMS_CACHE_CHECKPOINT_INTERVAL when a cache opens; huggingface_hub reads
# HF_TOKEN when a token is needed (HF_TOKEN_PATH, read at import, must match: names here are exact).
_MAY_DIFFER = (
    "OPENAI_API_KEY",
    "OPENAI_API_URL",
    "OPENAI_API_BASE",
    "OPENAI_BASE_URL",
    "PYTEST_CURRENT_TEST",
    "LMMS_CACHE_CHECKPOINT_INTERVAL",
    "HF_TOKEN",
)


def _signature(environment: dict[str, str]) -> dict[str, str]:
    """The part of an environment the host's import may read (everything but the pack's own variables;
    PYTHONPATH is compared apart: see ``WarmLauncher.path_prefix``)."""
    return {
        name: value
        for name, value in environment.items()
        if not name.startswith("LMMS_EVAL_TASKS_") and name not in (*_MAY_DIFFER, "PYTHONPATH")
    }


def _entries(python_path: str) -> list[str]:
    return [entry for entry in python_path.split(os.pathsep) if entry]


def _same_folder(one: str, other: str) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


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
        self._pending = b""  # replies read from the pipe, not yet returned (a whole line each)
        ready = self._reply(timeout=900)
        self.usable = bool(ready and ready.get("ready"))
        self.python_path = _entries(environment.get("PYTHONPATH", ""))
        self.imported = set(ready.get("top_level", ())) if ready else set()
        self.runs = 0
        self.running: WarmRun | None = None
        self.last_cpu: float | None = None  # user + system seconds of the last run `run` waited for

    def _reply(self, timeout: float | None) -> dict | None:
        """The server's next reply, or None when none came within ``timeout`` seconds (or the server ended).

        Read from the pipe's file descriptor with a buffer of its own: a buffered reader may hold a second
        reply (a run's end right after its start) where select() does not see it."""
        import select
        import time

        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([descriptor], [], [], left)[0]:
                return None
            chunk = os.read(descriptor, 65536)
            if not chunk:
                return None
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def accepts(self, environment: dict[str, str], cwd: str) -> bool:
        """True when a cold start in ``environment`` would import the host as this server did."""
        return (
            self.usable
            and self.running is None
            and self.process.poll() is None
            and _signature(environment) == self.signature
            and self.path_prefix(environment, cwd) is not None
            and "LMMS_EVAL_PLUGINS" not in environment  # the pack's plugin note depends on import order
        )

    def path_prefix(self, environment: dict[str, str], cwd: str | None = None) -> list[str] | None:
        """The PYTHONPATH entries ``environment`` puts before the server's own (a test's package folder),
        or None when a cold start would import differently: another PYTHONPATH, or an added folder holding
        a module the server has imported (it would shadow it) or package metadata (entry points, which
        the host reads at import) or a .pth file. An added entry naming the working directory of both the
        server and the run (``cwd``) is no change: `python -m` puts that folder first on sys.path already
        (the server imported the host with it there), so nothing in it is found through the later copy."""
        entries, own = _entries(environment.get("PYTHONPATH", "")), self.python_path
        if len(entries) < len(own) or entries[len(entries) - len(own) :] != own:
            return None
        added = entries[: len(entries) - len(own)]
        for entry in added:
            if not os.path.isdir(entry):
                return None
            if cwd is not None and _same_folder(entry, cwd) and _same_folder(entry, self.cwd):
                continue
            for name in os.listdir(entry):
                if name.endswith((".dist-info", ".egg-info", ".egg-link", ".pth")):
                    return None
                if name.split(".")[0] in self.imported:
                    return None
        return added

    def start(
        self,
        arguments: list[str],
        environment: dict[str, str],
        cwd: str,
        stdout: str,
        stderr: str,
        code: str | None = None,
    ) -> WarmRun:
        """Start `python -m lmms_eval_tasks ARGUMENTS` (or `python -c CODE ARGUMENTS`) in a forked child
        writing to the files ``stdout`` and ``stderr`` (the same path: one file for both)."""
        assert self.process.stdin is not None and self.running is None, "one run at a time per server"
        self.runs += 1
        global served_runs
        served_runs += 1
        request = {"argv": list(arguments), "env": dict(environment), "cwd": cwd, "stdout": stdout}
        request |= {"stderr": stderr, "code": code, "path_prefix": self.path_prefix(environment, cwd)}
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        started = self._reply(timeout=60)
        if started is None:
            raise RuntimeError(f"the warm launcher did not start a run: {self.log_tail()}")
        prefix = ["-c", code] if code is not None else ["-m", "lmms_eval_tasks"]
        self.running = WarmRun(self, started["pid"], [sys.executable, *prefix, *arguments])
        return self.running

    def run(
        self,
        arguments: list[str],
        environment: dict[str, str],
        cwd: str,
        timeout: float,
        code: str | None = None,
    ):
        """`python -m lmms_eval_tasks ARGUMENTS` in a forked child, returned as subprocess.run returns it."""
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory(dir=self.folder) as folder:
            outputs = {name: os.path.join(folder, name) for name in ("stdout", "stderr")}
            process = self.start(arguments, environment, cwd, outputs["stdout"], outputs["stderr"], code)
            timed_out = False
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                process.kill()
                process.wait(60)
            self.last_cpu = process.cpu
            texts = {}
            for name, path in outputs.items():
                with open(path, encoding="utf-8", errors="replace") as handle:
                    texts[name] = handle.read()
        if timed_out:
            raise subprocess.TimeoutExpired(
                process.args, timeout, output=texts["stdout"], stderr=texts["stderr"]
            )
        return subprocess.CompletedProcess(process.args, process.returncode, texts["stdout"], texts["stderr"])

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


class WarmRun:
    """A run a server forked, handled as the tests handle a subprocess.Popen: pid, poll, wait, send_signal,
    terminate, kill, returncode (negative: the signal that ended it), and cpu (its user + system seconds)."""

    def __init__(self, server: WarmLauncher, pid: int, args: list[str]) -> None:
        self.server, self.pid, self.args = server, pid, args
        self.returncode: int | None = None
        self.cpu: float | None = None

    def _ended(self, reply: dict | None) -> int | None:
        if reply is not None:
            self.returncode, self.cpu = reply["status"], reply.get("cpu")
            self.server.running = None
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self.returncode is not None else self._ended(self.server._reply(timeout=0))

    def wait(self, timeout: float | None = None) -> int:
        import subprocess

        if self.returncode is None and self._ended(self.server._reply(timeout)) is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signal_number: int) -> None:
        if self.poll() is None:  # still running (or not yet reaped by the server: the pid is still its own)
            os.kill(self.pid, signal_number)

    def terminate(self) -> None:
        import signal

        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        import signal

        self.send_signal(signal.SIGKILL)


_servers: dict[str, WarmLauncher] = {}
last_start_reason = ""  # why the last server was started: what no running server accepted (for the run log)
served_runs = 0  # runs served warm by this process's servers, closed ones included
servers_started = 0  # servers this process started (each one paid the host's import)
MAX_SERVERS = 4  # per test process, each for one environment (about 0.4 GB each): the usual one and
# test_first_run's three datasets caches (with 3, the usual one gave way when it had served as few runs)


def warm_launcher(environment: dict[str, str], cwd: str) -> WarmLauncher | None:
    """This process's server for ``environment`` (started on first use), else None (the run starts cold).

    A server is started in the environment of the first run that asks for one, and serves the runs whose
    environment the host's import would read the same way; the environment of a test worker changes as
    libraries it imports set variables (cv2, OpenMP), so a few servers are kept, one per such environment.
    """
    if os.environ.get(COLD_ENV) == "1" or environment.get(COLD_ENV) == "1":
        return None
    serving = [key for key, server in _servers.items() if server.accepts(environment, cwd)]
    own = {**_signature(environment), "PYTHONPATH": environment.get("PYTHONPATH", "")}
    key = serving[0] if serving else json.dumps(own, sort_keys=True)
    server = _servers.pop(key, None)
    if server is None:
        global last_start_reason
        last_start_reason = _why_not_served(environment, cwd)
        if len(_servers) >= MAX_SERVERS:  # the least used gives way, the least recently used of those: a
            # one-off environment (a test's own datasets cache) ages out, the suite's usual one stays
            fewest = min(server.runs for server in _servers.values())
            _servers.pop(next(k for k, server in _servers.items() if server.runs == fewest)).close()
        import atexit

        global servers_started
        servers_started += 1
        server = WarmLauncher(environment, cwd)
        atexit.register(server.close)
    _servers[key] = server  # the most recently used last
    return server if server.accepts(environment, cwd) else None


def _why_not_served(environment: dict[str, str], cwd: str) -> str:
    """Why none of this process's servers serves ``environment``: per server, what differs (variable names
    of the signature, PYTHONPATH, busy, ended), for the run log (tests/helpers.py ``_log_run``)."""
    if not _servers:
        return "no server yet"
    signature, reasons = _signature(environment), []
    for server in _servers.values():
        names = sorted(
            name
            for name in set(signature) | set(server.signature)
            if signature.get(name) != server.signature.get(name)
        )
        if server.path_prefix(environment, cwd) is None:
            names.append("PYTHONPATH")
        if "LMMS_EVAL_PLUGINS" in environment:
            names.append("LMMS_EVAL_PLUGINS")
        if server.running is not None:
            names.append("(busy)")
        if not server.usable or server.process.poll() is not None:
            names.append("(ended)")
        reasons.append(",".join(names) or "(none)")
    return "differs from each server in: " + " | ".join(reasons)


if __name__ == "__main__":
    main()
