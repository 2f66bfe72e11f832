"""`lmms-eval-tasks robustness`: write corrupted variants of any harness task (and a group) into a folder.

Then `lmms_eval --include_path DIR --tasks <group> ...` measures the task under corruption, and
`lmms-eval-tasks vre <output folder>` computes the VRB robustness metrics from the run (vrb.md in the
pack's documentation).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _names(values: list[str] | None) -> list[str]:
    return [part for value in values or [] for part in value.split(",") if part]


def register(subparsers: Any) -> None:
    """Add the ``robustness`` subcommand."""
    parser = subparsers.add_parser(
        "robustness",
        help="write corrupted variants of any task (clean + corruptions x severities) and a group",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tasks", nargs="+", metavar="TASK", help="host, pack or --include_path task names")
    parser.add_argument(
        "--corruptions", nargs="+", default=None, help="names (space or comma separated; default: VRB's 14)"
    )
    parser.add_argument("--severities", nargs="+", default=None, help="1..5 (default: all five)")
    parser.add_argument(
        "--profile", default="vrb", help="corruption profile: vrb (default), vrb_official or imagenet_c"
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed of the per-image corruption noise")
    parser.add_argument("--group", default=None, help="group name (default: <task>_vrb, or vrb_robustness)")
    parser.add_argument(
        "--include_path", action="append", default=[], help="folder of your own tasks to look TASK up in"
    )
    parser.add_argument("--out", required=True, type=Path, help="folder to write the tasks into")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handler of ``lmms-eval-tasks robustness``."""
    from lmms_eval_tasks.corruptions import VRB_PAPER_CORRUPTIONS
    from lmms_eval_tasks.tasks.vrb.robustness import write_robustness_tasks

    corruptions = _names(args.corruptions) or list(VRB_PAPER_CORRUPTIONS)
    try:
        severities = [int(value) for value in _names(args.severities)] or [1, 2, 3, 4, 5]
        group, variants, files = write_robustness_tasks(
            args.out,
            args.tasks,
            corruptions=corruptions,
            severities=severities,
            profile=args.profile,
            seed=args.seed,
            group=args.group,
            include_path=args.include_path,
        )
    except (KeyError, ValueError) as error:
        print(f"lmms-eval-tasks robustness: {error}", file=sys.stderr)
        return 2
    print(f"wrote {len(variants)} tasks and group {group!r} into {args.out}")
    if sorted(severities) != [1, 2, 3, 4, 5]:
        print("note: the VRB sub-metrics (lmms-eval-tasks vre) need all five severities", file=sys.stderr)
    include = " ".join(f"--include_path {path}" for path in [*args.include_path, str(args.out)])
    print(f"run:   lmms_eval {include} --tasks {group} --model ... --output_path OUT")
    print("score: lmms-eval-tasks vre OUT --metric <the task's metric> [--scale 100 for percentages]")
    return 0
