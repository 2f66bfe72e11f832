"""`lmms-eval-tasks tasks` and `tasks-dir`: the tasks and groups (installed benchmarks' too), its folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from lmms_eval_tasks import TASKS_DIR


def _command_tasks(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.framework.registry import installed_task_folders
    from lmms_eval_tasks.framework.task_index import pack_tasks

    entries = pack_tasks() + [e for folder in installed_task_folders() for e in pack_tasks(Path(folder))]
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


def register(subparsers: Any) -> None:
    """Add the `tasks` and `tasks-dir` subcommands."""
    tasks = subparsers.add_parser("tasks", help="list the pack's tasks and groups")
    tasks.add_argument("--json", action="store_true", help="print JSON instead of a table")
    tasks.set_defaults(handler=_command_tasks)
    tasks_dir = subparsers.add_parser("tasks-dir", help="print the pack's task folder")
    tasks_dir.set_defaults(handler=_command_tasks_dir)
