"""The `lmms_eval` launcher: the host harness's CLI with this pack's tasks on the include path.

lmms-eval 0.7.3 has no entry point for task packs and its `LMMS_EVAL_PLUGINS` task path is broken, so the
launcher makes every TaskManager the host builds also index this pack's task folder (after the built-ins and
after any `--include_path` or config `include_path` of the user's, which therefore win on a name clash).
It accepts every host flag and subcommand unchanged, works under `accelerate launch -m lmms_eval_tasks`, and,
unlike the host (which logs and exits 0), exits non-zero when an evaluation fails. It also installs the
pack's fixes for lmms-eval 0.7.3 bugs (`models/host_fixes.py`) before the host runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from lmms_eval_tasks import TASKS_DIR

_PACK_TASKS_DIR = str(TASKS_DIR)
_installed = False


def _with_pack_dir(include_path: str | Sequence[str] | None) -> list[str]:
    """The user's include path(s) with the pack's task folder appended once."""
    if include_path is None:
        paths: list[str] = []
    elif isinstance(include_path, str):
        paths = [include_path]
    else:
        paths = list(include_path)
    normalised = {os.path.realpath(path) for path in paths}
    if os.path.realpath(_PACK_TASKS_DIR) not in normalised:
        paths.append(_PACK_TASKS_DIR)
    return paths


def install_pack_tasks() -> None:
    """Make every host TaskManager index the pack's tasks (idempotent; imports lmms_eval.tasks).

    The pack's entries come from the precomputed `tasks/host_index.json` when its fingerprint matches the
    YAML files (parsing them costs about a second per process); otherwise the folder is parsed as usual.
    Either way the pack comes last: built-ins and the user's own include paths win on a name clash.
    """
    global _installed
    if _installed:
        return
    from lmms_eval.tasks import TaskManager

    from lmms_eval_tasks.task_index import load_host_index

    original = TaskManager.initialize_tasks

    def initialize_tasks(self: Any, include_path: Any = None, include_defaults: bool = True) -> Any:
        include_path = _with_pack_dir(include_path)
        self.include_path = include_path
        pack_entries = load_host_index()
        if pack_entries is None:
            return original(self, include_path=include_path, include_defaults=include_defaults)
        pack_dir = os.path.realpath(_PACK_TASKS_DIR)
        others = [path for path in include_path if os.path.realpath(path) != pack_dir]
        index = original(self, include_path=others or None, include_defaults=include_defaults)
        return {**pack_entries, **index}

    initialize_tasks.__doc__ = original.__doc__
    TaskManager.initialize_tasks = initialize_tasks
    _installed = True


class _FailureRecorder:
    """Wraps the host's per-configuration evaluation to remember exceptions the host swallows."""

    def __init__(self) -> None:
        self.failures: list[BaseException] = []

    def install(self) -> None:
        import lmms_eval.__main__ as host_main

        original = host_main.cli_evaluate_single
        if getattr(original, "_lmms_eval_tasks_wrapped", False):
            original = original.__wrapped__

        def cli_evaluate_single(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except BaseException as error:  # noqa: BLE001 - recorded, then re-raised for the host to log
                if not isinstance(error, SystemExit) or error.code not in (None, 0):
                    self.failures.append(error)
                raise

        cli_evaluate_single._lmms_eval_tasks_wrapped = True  # type: ignore[attr-defined]
        cli_evaluate_single.__wrapped__ = original  # type: ignore[attr-defined]
        host_main.cli_evaluate_single = cli_evaluate_single


def _requested_models(argv: Sequence[str]) -> list[str]:
    """Model names named by `--model X`, `--model=X` or the `model:` keys of a `--config` file."""
    models: list[str] = []
    config_paths: list[str] = []
    for index, argument in enumerate(argv):
        for flag, bucket in (("--model", models), ("--config", config_paths)):
            if argument == flag and index + 1 < len(argv):
                bucket.append(argv[index + 1])
            elif argument.startswith(flag + "="):
                bucket.append(argument.split("=", 1)[1])
    for path in config_paths:
        try:
            import yaml

            with open(path, encoding="utf-8") as handle:
                loaded = yaml.safe_load(handle)
        except (OSError, ValueError):
            continue  # the host reports unreadable configs itself
        for entry in loaded if isinstance(loaded, list) else [loaded]:
            if isinstance(entry, dict) and isinstance(entry.get("model"), str):
                models.append(entry["model"])
    return models


def _is_evaluation(argv: Sequence[str]) -> bool:
    """True for the host's flat form (`--model X --tasks Y`) and its `eval` subcommand with arguments."""
    if not argv:
        return False
    return argv[0].startswith("-") or (argv[0] == "eval" and len(argv) > 1)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the host CLI with the pack's tasks; returns the process exit code (non-zero on failure)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in ("--version",):
        from lmms_eval_tasks import __version__

        print(f"lmms-eval-tasks {__version__}")
        return 0
    install_pack_tasks()
    recorder = _FailureRecorder()
    if _is_evaluation(arguments) and not any(flag in arguments for flag in ("-h", "--help")):
        recorder.install()
        from lmms_eval_tasks.models.host_fixes import install_host_fixes

        install_host_fixes(_requested_models(arguments))

    from lmms_eval.cli.dispatch import main as host_dispatch

    saved_argv = sys.argv
    sys.argv = ["lmms_eval", *arguments]
    exit_code: int = 0
    try:
        host_dispatch()
    except SystemExit as stop:
        if stop.code is None:
            exit_code = 0
        elif isinstance(stop.code, int):
            exit_code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            exit_code = 1
    except KeyboardInterrupt:
        exit_code = 130
    finally:
        sys.argv = saved_argv
    if recorder.failures:
        for failure in recorder.failures:
            message = str(failure) or type(failure).__name__
            print(f"lmms_eval: evaluation failed: {type(failure).__name__}: {message}", file=sys.stderr)
        return exit_code or 1
    return exit_code


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())
