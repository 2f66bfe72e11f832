"""Shared helpers for the test suite: run the launcher in a subprocess, find the host's output files."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"  # the hub commit folder a download leaves

REPO_ROOT = Path(__file__).resolve().parents[1]

# Set by tests/conftest.py to the node id of the running test when that test is not marked `slow`: the
# quick tier (`make test-quick`, `-m "not slow"`) must start no launcher and no benchmark script.
QUICK_TEST_VARIABLE = "LMMS_EVAL_TASKS_TESTS_QUICK_TEST"


# Variables libraries set in the test process when imported (cv2: LD_LIBRARY_PATH and Qt's QT_QPA_*;
# OpenMP runtimes: KMP_*; torch: TORCHINDUCTOR_CACHE_DIR, its default, when the host is imported in-process),
# never in the shell a user starts the launcher from: a launcher run gets the values the session started
# with, so runs before and after such an import share one warm launcher.
# lmms-eval's `ola` model module sets its own settings in os.environ when imported (a test importing every
# model wrapper in-process), decord appends its folder to PATH, and benchmarks/corruption_speed.py (loaded
# by tests/corruptions/test_corruptions_reference.py) pins the BLAS thread counts, and a launcher run made
# in-process with --use_cache leaves its LMMS_CACHE_RUN_ID (host/resume.py): never a user's shell.
_SET_BY_LIBRARIES = (
    "LD_LIBRARY_PATH",
    "QT_",
    "KMP_",
    "TORCHINDUCTOR_CACHE_DIR",
    "PATH",
    *("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "LMMS_CACHE_RUN_ID"),
    *("LOWRES_RESIZE", "HIGHRES_BASE", "VIDEO_RESIZE", "VIDEO_MAXRES", "VIDEO_MINRES", "MAXRES", "MINRES"),
    *("FORCE_NO_DOWNSAMPLE", "LOAD_VISION_EARLY", "PAD2STRIDE", "USE_SPEECH"),
)
_CANONICAL = sys.modules.get("tests.helpers")  # one snapshot for both names of this module (helpers too)
_STARTUP_ENVIRONMENT: dict[str, str] = getattr(_CANONICAL, "_STARTUP_ENVIRONMENT", None) or dict(os.environ)


def _as_at_startup(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` with the variables libraries set (``_SET_BY_LIBRARIES``) as the session began."""
    kept = {name: value for name, value in environment.items() if not name.startswith(_SET_BY_LIBRARIES)}
    started = {k: v for k, v in _STARTUP_ENVIRONMENT.items() if k.startswith(_SET_BY_LIBRARIES)}
    return {**kept, **started}


def offline_environment(**extra: str) -> dict[str, str]:
    """The current environment, offline for the hub, with the rule judge unless ``extra`` says otherwise."""
    environment = {
        **_as_at_startup(dict(os.environ)),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "LMMS_EVAL_TASKS_JUDGE": "rule",
        "OMP_NUM_THREADS": "1",
    }
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_API_URL",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        QUICK_TEST_VARIABLE,
    ):
        environment.pop(name, None)
    environment.update(extra)
    return environment


def refuse_in_quick_tests(what: str) -> None:
    """Fail a test not marked `slow` that starts ``what`` (a launcher run, a benchmark script)."""
    test = os.environ.get(QUICK_TEST_VARIABLE)
    if test:
        raise AssertionError(
            f"{test} starts {what} in a subprocess but is not marked slow: add `@pytest.mark.slow` "
            "(or `pytestmark = pytest.mark.slow`) so `make test-quick` leaves it out"
        )


def run_launcher(
    *arguments: str,
    environment: dict[str, str] | None = None,
    timeout: float = 900,
    cwd: Path | None = None,
    cold: bool = False,
    code: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m lmms_eval_tasks ARGS` (or `python -c CODE ARGS`) and capture its output (only from a
    test marked `slow`).

    The run is a child forked from a process that has already imported the host (tests/warm_launcher.py:
    the same launcher, arguments, environment and working directory, without the 10-15 s import), unless
    the environment differs from that process's in what the host's import reads, or ``cold`` is asked
    (a test that measures the whole process, import included) or LMMS_EVAL_TASKS_TESTS_COLD_LAUNCHER=1 is
    set. The result's ``cpu_seconds`` and ``wall_seconds`` are the run's process's user + system CPU time
    and its wall time (a warm server's start not included).
    """
    import resource

    from tests import warm_launcher as warm

    refuse_in_quick_tests("the launcher")
    environment = environment or offline_environment()
    directory = str(cwd or REPO_ROOT)
    started, servers_started = time.monotonic(), warm.servers_started
    server = None if cold else warm.warm_launcher(environment, directory)
    if server is not None:
        forked = time.monotonic()  # the server is up: what follows is the run alone
        completed = server.run(list(arguments), environment, directory, timeout, code)
        completed.wall_seconds = time.monotonic() - forked  # type: ignore[attr-defined]
        completed.cpu_seconds = server.last_cpu  # type: ignore[attr-defined]
        new_server = warm.servers_started > servers_started
        kind = "warm, new server" if new_server else "warm"
        why = warm.last_start_reason if new_server else None
        _log_run(arguments, started, kind, completed.cpu_seconds, why)  # type: ignore[attr-defined]
        return completed
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    prefix = ["-c", code] if code is not None else ["-m", "lmms_eval_tasks"]
    completed = subprocess.run(
        [sys.executable, *prefix, *arguments],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
        cwd=directory,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    completed.cpu_seconds = cpu_seconds  # type: ignore[attr-defined]
    completed.wall_seconds = time.monotonic() - started  # type: ignore[attr-defined]
    _log_run(arguments, started, "cold", cpu_seconds)
    return completed


def start_launcher(
    *arguments: str,
    log: Path,
    environment: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Any:
    """Start `python -m lmms_eval_tasks ARGS`, its stdout and stderr going to the file ``log``, and return
    the running process (a subprocess.Popen, or a warm launcher's WarmRun: pid, poll, wait, send_signal,
    terminate, kill, returncode) for a test that stops it (only from a test marked `slow`).

    Forked warm as ``run_launcher`` is; a signal the test sends reaches the launcher's own process as it
    would a cold one (the child is a separate process that has only the host's import in common)."""
    from tests import warm_launcher as warm

    refuse_in_quick_tests("the launcher")
    environment = environment or offline_environment()
    directory = str(cwd or REPO_ROOT)
    started, servers_started = time.monotonic(), warm.servers_started
    server = warm.warm_launcher(environment, directory)
    if warm.servers_started > servers_started:  # logged when started (the test stops the run itself)
        _log_run(arguments, started, "warm, new server, started", None, warm.last_start_reason)
    if server is not None:
        return server.start(list(arguments), environment, directory, str(log), str(log))
    with open(log, "w", encoding="utf-8") as handle:  # the child holds its own descriptor
        return subprocess.Popen(
            [sys.executable, "-m", "lmms_eval_tasks", *arguments],
            env=environment,
            cwd=directory,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )


RUN_LOG_VARIABLE = "LMMS_EVAL_TASKS_TESTS_RUN_LOG"  # a file: one JSON line per launcher run (test, seconds)


def _log_run(
    arguments: tuple[str, ...], started: float, kind: str, cpu: float | None, why: str | None = None
) -> None:
    """Append the run to $LMMS_EVAL_TASKS_TESTS_RUN_LOG when set (to see where a file's seconds go; for a
    run that started a warm server, ``why``: what differed from the servers already running)."""
    path = os.environ.get(RUN_LOG_VARIABLE)
    if not path:
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    seconds = {"wall": round(time.monotonic() - started, 1), "cpu": None if cpu is None else round(cpu, 1)}
    entry = {"test": test, "kind": kind, **seconds, "argv": list(arguments)}
    if why is not None:
        entry["why"] = why
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def free_port() -> str:
    """A TCP port on 127.0.0.1 free right now (for `accelerate launch --main_process_port`): a fixed port
    collides when two test workers, or two checkouts on one machine, launch at the same time."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


def native_abort_only(stderr: str) -> bool:
    """A rank ended by SIGABRT, every failed rank ended by a signal (one that exited 1 failed in Python, its
    cause in a closing line), and no rank raised a Python error (the launcher's own traceback aside)."""
    tracebacks = stderr.split("Traceback (most recent call last):")[1:]
    by_signal = all(code.startswith("-") for code in re.findall(r"exitcode\s*:\s*(-?\d+)", stderr))
    return (
        "Signal 6 (SIGABRT)" in stderr
        and by_signal
        and all("accelerate_cli.py" in block[:1000] for block in tracebacks)
    )


def failure_excerpt(log: str) -> str:
    """The first Python traceback or fatal-error report of any rank, then the log's tail."""
    markers = ("Traceback (most recent call last)", "Fatal Python error")
    starts = [index for index in map(log.find, markers) if index >= 0]
    head = log[min(starts) : min(starts) + 3000] + "\n[...]\n" if starts else ""
    return head + log[-3000:]


def run_two_processes(
    launch: Callable[[], subprocess.CompletedProcess[str]],
) -> subprocess.CompletedProcess[str]:
    """``launch`` (an `accelerate launch --num_processes 2` run), launched again once if a rank aborted in
    native code with no Python error, with a warning carrying the first run's excerpt. CI saw such aborts
    (gloo's threads outliving Python at exit) before the launcher destroyed the process group; the retry
    keeps a recurrence visible without failing the suite on one native crash. Fails with the whole excerpt
    (pytest would cut an assertion message) when the run still failed."""
    import pytest

    launched = launch()
    if launched.returncode != 0 and native_abort_only(launched.stderr):
        warnings.warn(
            f"two-process run aborted natively, retried once: {failure_excerpt(launched.stderr)}",
            stacklevel=2,
        )
        launched = launch()
    if launched.returncode != 0:
        excerpt = failure_excerpt(launched.stdout + launched.stderr)
        pytest.fail(f"two-process run failed ({launched.returncode}):\n{excerpt}", pytrace=False)
    return launched


def results_json(output_path: Path) -> dict[str, Any]:
    """The single `*_results.json` the host wrote under ``output_path``."""
    found = sorted(output_path.rglob("*_results.json"))
    assert len(found) == 1, f"expected one results file under {output_path}, found {found}"
    return json.loads(found[0].read_text(encoding="utf-8"))


def samples_jsonl(output_path: Path, task: str) -> list[dict[str, Any]]:
    """The per-sample records the host wrote for ``task`` with --log_samples."""
    found = sorted(output_path.rglob(f"*_samples_{task}.jsonl"))
    assert len(found) == 1, f"expected one samples file for {task} under {output_path}, found {found}"
    return [json.loads(line) for line in found[0].read_text(encoding="utf-8").splitlines() if line.strip()]


def toy_schema(*fields: str) -> Any:
    """A record schema for a toy benchmark registered by a test: ``fields`` required (any kind), every
    record its own identity (toys do not test the contract; tests/contract does)."""
    from lmms_eval_tasks.framework.records import RecordField, RecordSchema

    names = fields or ("prediction",)
    return RecordSchema(
        fields=tuple(RecordField(name, "any") for name in names),
        identity=(names[0],),
        identity_key="tests.helpers:object_identity",
    )


def object_identity(record: Any) -> tuple[int]:
    """Each record object is its own identity (for ``toy_schema``)."""
    return (id(record),)


def build_hub_cache(
    cache: Path, repo_id: str, splits: dict[str, Path], data_files: Any = None, config: str = "default"
) -> Path:
    """A `datasets` cache of ``repo_id`` as a hub download writes it: the real parquet builder prepares the
    splits (``<org>___<snake name>/<config id>/0.0.0/<commit>/<name>-<split>.arrow`` + dataset_info.json);
    the config folder gets the id an offline load looks up (``default``, or ``default-<hash of the
    data_files>`` when the task passes data_files), as `datasets`' own ``create_config_id`` computes it."""
    import datasets
    from datasets.data_files import DataFilesDict
    from datasets.naming import camelcase_to_snakecase
    from datasets.packaged_modules.parquet.parquet import Parquet

    name = camelcase_to_snakecase(repo_id.split("/")[1])
    builder = Parquet(
        cache_dir=str(cache),
        dataset_name=name,  # no repo_id: the builder checks hub files belong to it; the folder is moved below
        hash=COMMIT,
        data_files=DataFilesDict.from_patterns({split: [str(path)] for split, path in splits.items()}),
    )
    builder.download_and_prepare()
    prepared = Path(builder.cache_dir)
    config_id = datasets.BuilderConfig(config).create_config_id(
        {"data_files": data_files} if data_files else {}
    )
    target = cache / f"{repo_id.split('/')[0]}___{name}" / config_id / "0.0.0" / COMMIT
    target.parent.mkdir(parents=True, exist_ok=True)
    prepared.rename(target)
    info_path = target / "dataset_info.json"
    info = json.loads(info_path.read_text(encoding="utf-8"))
    info["config_name"] = config
    info_path.write_text(json.dumps(info), encoding="utf-8")
    return target


def task_yaml(path: Path) -> dict[str, Any]:
    """A task YAML as the host reads it: ``include:`` templates merged under the file's own keys
    (``!function`` lines dropped: the values here are plain keys such as ``dataset_path``)."""
    import yaml

    lines = path.read_text(encoding="utf-8").splitlines()
    text = "\n".join(line for line in lines if "!function" not in line)
    config = yaml.safe_load(text) or {}
    include = config.pop("include", None)
    if include is None:
        return config
    return {**task_yaml((path.parent / include).resolve()), **config}


# The model card's command on the sample tasks (tests/test_card_command.py), run once per session on the tiny
# LLaVA (conftest fixture ``tiny_llava_card_run``) and read by every test that needs a limited tiny-LLaVA run.
CARD_LOG_TASK = "dare_sample_single_log_p1"
CARD_TASKS = ("dare_sample", "hallusionbench_offline_sample", CARD_LOG_TASK)


def card_command_arguments(tiny_llava_dir: Path, output: Path) -> list[str]:
    """The card's launcher arguments: ``--model llava`` (served by the tiny LLaVA), --limit 4."""
    return [
        "--model", "llava", "--model_args", f"pretrained={tiny_llava_dir}", "--tasks", ",".join(CARD_TASKS),
        "--limit", "4", "--verbosity", "INFO", "--gen_kwargs", "max_new_tokens=8",
        "--output_path", str(output), "--log_samples",
    ]  # fmt: skip
