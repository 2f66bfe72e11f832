"""`lmms-eval-tasks`: the pack's utility CLI; each public module here and each benchmark's ``cli_*.py``
defines ``register(subparsers)`` (handler=<function(args) -> int>, heavy imports inside handlers)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from lmms_eval_tasks import TASKS_DIR, __version__


def command_modules() -> Iterator[str]:
    """Names of every module that registers subcommands: this package's, then each benchmark's ``cli_*``."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda item: item.name):
        if not info.name.startswith("_"):
            yield f"{__name__}.{info.name}"
    for path in sorted(TASKS_DIR.glob("*/cli_*.py")):
        yield f"lmms_eval_tasks.tasks.{path.parent.name}.{path.stem}"


DESCRIPTION = """\
The lmms-eval-tasks utilities: check the setup, list tasks, re-score and compare saved runs, prepare data,
write reports and leaderboard files. Evaluations themselves run with the `lmms_eval` command, e.g.
  lmms_eval --model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf,device_map=cuda:0 \
    --tasks dare --output_path out
`lmms-eval-tasks COMMAND --help` describes each command."""

EPILOG = """\
first steps:
  lmms-eval-tasks doctor          what works on this machine, each problem with its fix
  lmms-eval-tasks tasks           the pack's tasks and groups, one line each
  lmms-eval-tasks score BENCHMARK OUTPUT_FOLDER --task TASK   re-score a run's saved records
  lmms-eval-tasks new-benchmark NAME   write a working benchmark to edit into your own"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `lmms-eval-tasks` (its help is for users: what each command does)."""
    parser = argparse.ArgumentParser(
        prog="lmms-eval-tasks",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lmms-eval-tasks {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules():
        importlib.import_module(name).register(subparsers)  # AttributeError names a module without one
    for command in subparsers.choices.values():  # module docstrings as help: plain quotes, not reST's
        if command.description:
            command.description = command.description.replace("``", "`")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Any = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    from lmms_eval_tasks.wordnet import WordNetMissing

    try:
        return int(handler(args) or 0)
    except WordNetMissing as error:  # `score tdiuc`, `compare tdiuc` on a machine without WordNet: one line
        print(f"lmms-eval-tasks {args.command}: {error}", file=sys.stderr)
        return 1


def run() -> None:
    """Console-script entry point: quiet on a closed pipe (``| head``); SIGTERM ends it as an exception so
    temporary files (``prepare``'s staging folder, ``score``'s report ``.tmp``) are removed."""
    from lmms_eval_tasks.closed_pipe import end_quietly_on_closed_pipe
    from lmms_eval_tasks.host.termination import end_on_sigterm_with_cleanup

    end_on_sigterm_with_cleanup()
    raise SystemExit(end_quietly_on_closed_pipe(main))
