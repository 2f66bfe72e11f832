"""`lmms-eval-tasks`: the pack's utility CLI (list tasks, re-score saved predictions, build test assets).

Subcommands:
  tasks                      list the pack's tasks and groups with one-line descriptions
  tasks-dir                  print the task folder (for `lmms-eval --include_path ...`)
  score BENCHMARK FILE       re-score saved predictions (JSON lines) and print metrics as JSON
  build-tiny-llava           build the tiny random LLaVA used by the demo and tests
  setup-wordnet              make Debian's WordNet files readable by nltk (offline)
  corrupt ...                write a corrupted copy of a dataset (see `corrupt --help`)
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmms_eval_tasks import TASKS_DIR, __version__


def _parse_option(text: str) -> tuple[str, Any]:
    """Parse a `key=value` option; values are JSON when they parse as JSON, else strings."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def _command_tasks(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.task_index import pack_tasks

    entries = pack_tasks()
    if args.json:
        print(json.dumps([entry.as_dict() for entry in entries], indent=2))
        return 0
    width = max((len(entry.name) for entry in entries), default=10)
    for entry in entries:
        print(f"{entry.name:<{width}}  {entry.kind:<5}  {entry.description}")
    return 0


def _command_tasks_dir(args: argparse.Namespace) -> int:
    print(TASKS_DIR)
    return 0


def _json_safe(value: Any) -> Any:
    """Replace NaN/inf (metrics that cannot be computed on this input) with null: strict JSON for readers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    return value


def _command_score(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.judges.pipeline import JudgingFailed
    from lmms_eval_tasks.registry import benchmarks
    from lmms_eval_tasks.scoring import RecordError, get_scorer, read_jsonl

    if args.benchmark not in benchmarks():
        known = ", ".join(sorted(benchmarks()))
        print(f"lmms-eval-tasks score: unknown benchmark {args.benchmark!r}; known: {known}", file=sys.stderr)
        return 2
    path = Path(args.records)
    if path.is_dir():
        print(f"lmms-eval-tasks score: {path} is a directory, not a JSON-lines file", file=sys.stderr)
        return 2
    if not path.is_file():
        print(f"lmms-eval-tasks score: no such file: {path}", file=sys.stderr)
        return 2
    try:
        try:
            records = read_jsonl(path)
        except OSError as error:  # unreadable file (permissions, I/O)
            print(f"lmms-eval-tasks score: cannot read {path}: {error.strerror or error}", file=sys.stderr)
            return 2
        if not records:
            raise RecordError("-", "<file>", f"{path} holds no records")
        scorer = get_scorer(args.benchmark)
        options = dict(args.option or [])
        try:
            inspect.signature(scorer).bind(records, **options)
        except TypeError as error:
            print(f"lmms-eval-tasks score: bad option for {args.benchmark}: {error}", file=sys.stderr)
            return 2
        metrics = scorer(records, **options)
    except RecordError as error:
        print(f"lmms-eval-tasks score: {path}: {error}", file=sys.stderr)
        return 1
    except JudgingFailed as error:  # no reply gave a verdict: no metric exists (docs/judges.md)
        print(f"lmms-eval-tasks score: {error}", file=sys.stderr)
        return 3
    except ValueError as error:  # an option value the scorer rejects (scoring.OptionError, one line)
        print(f"lmms-eval-tasks score: {args.benchmark}: {error}", file=sys.stderr)
        return 2
    print(json.dumps(_json_safe(metrics), indent=2, default=str, allow_nan=False))
    return 0


def _command_build_tiny_llava(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.models.tiny_llava import build_tiny_llava

    path = build_tiny_llava(args.output, seed=args.seed)
    print(path)
    return 0


def _command_setup_wordnet(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.wordnet import check_wordnet_loads, prepare_nltk_wordnet

    try:
        path = prepare_nltk_wordnet(args.target, source=args.source)
        summary = check_wordnet_loads(args.target)
    except (FileNotFoundError, RuntimeError) as error:
        print(f"lmms-eval-tasks setup-wordnet: {error}", file=sys.stderr)
        return 1
    print(path)
    print(summary)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `lmms-eval-tasks`."""
    parser = argparse.ArgumentParser(
        prog="lmms-eval-tasks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"lmms-eval-tasks {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    tasks = commands.add_parser("tasks", help="list the pack's tasks and groups")
    tasks.add_argument("--json", action="store_true", help="print JSON instead of a table")
    tasks.set_defaults(handler=_command_tasks)

    tasks_dir = commands.add_parser("tasks-dir", help="print the pack's task folder")
    tasks_dir.set_defaults(handler=_command_tasks_dir)

    score = commands.add_parser("score", help="re-score saved predictions without running a model")
    score.add_argument("benchmark", help="benchmark name, e.g. hallusionbench or dare")
    score.add_argument("records", help="JSON-lines file, one record per line")
    score.add_argument(
        "--option",
        "-o",
        action="append",
        type=_parse_option,
        metavar="KEY=VALUE",
        help="scoring option passed to the benchmark's scorer (repeatable; JSON values allowed)",
    )
    score.set_defaults(handler=_command_score)

    tiny = commands.add_parser(
        "build-tiny-llava", help="build the tiny random LLaVA (offline, deterministic)"
    )
    tiny.add_argument("--output", required=True, type=Path, help="folder to write the model to")
    tiny.add_argument("--seed", type=int, default=0)
    tiny.set_defaults(handler=_command_build_tiny_llava)

    wordnet = commands.add_parser("setup-wordnet", help="prepare WordNet for nltk from Debian's wordnet-base")
    wordnet.add_argument("--target", type=Path, required=True, help="nltk data folder to write into")
    wordnet.add_argument("--source", type=Path, default=Path("/usr/share/wordnet"))
    wordnet.set_defaults(handler=_command_setup_wordnet)

    from lmms_eval_tasks.commands import register_all
    from lmms_eval_tasks.corruptions import cli as corruptions_cli

    corruptions_cli.add_parser(commands)
    register_all(commands)  # one module per further subcommand in lmms_eval_tasks/commands/
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None and args.command == "corrupt":
        from lmms_eval_tasks.corruptions import cli as corruptions_cli

        return int(corruptions_cli.run(args) or 0)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


def run() -> None:
    """Console-script entry point."""
    raise SystemExit(main())


if __name__ == "__main__":
    run()
