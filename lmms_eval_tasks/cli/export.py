"""`lmms-eval-tasks export`: leaderboard files and a CSV of every metric, in one place.

- ``export <benchmark> RUN_DIR --out FILE``: the leaderboard file a task of the benchmark wrote
  (HallusionBench's ``HallusionBench_result.json``, ConTextual's predictions: a ``.csv`` FILE gets the CSV).
- ``export csv RUN_DIR... --out FILE``: every metric of every report, a row per run, task and metric.

``--task`` picks one task when a folder holds several runs of the benchmark.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lmms_eval_tasks.cli._arguments import fail
from lmms_eval_tasks.documentation import doc

# Why a benchmark has no leaderboard file, said when it is asked for (docs: each benchmark's page).
_PUBLIC = " (its answers are public: every number is scored here; `export csv` writes them)"
NO_LEADERBOARD = {
    "dare": (
        " (its test answers are withheld and no public leaderboard was found: send DARE's authors the "
        f"dare_test records, <run_id>/<task>_samples.jsonl; {doc('dare.md')})"
    ),
    **dict.fromkeys(("vrb", "vqdv1", "revisiting", "tdiuc", "tallyqa", "dvqa"), _PUBLIC),
}


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.human_report import (
        ReportInputError,
        export_csv,
        export_leaderboard,
        leaderboard_benchmarks,
    )

    prog = "lmms-eval-tasks export"
    leaderboards = leaderboard_benchmarks()
    try:
        if args.what == "csv":
            path = export_csv(args.run_dirs, args.out)
        elif args.what in leaderboards:
            if len(args.run_dirs) != 1:
                return fail(prog, f"{args.what} takes one RUN_DIR, got {len(args.run_dirs)}")
            path = export_leaderboard(args.what, args.run_dirs[0], args.out, task=args.task)
        else:
            known = ", ".join((*leaderboards, "csv"))
            why = NO_LEADERBOARD.get(args.what, "")
            return fail(prog, f"nothing to export for {args.what!r}{why}; choose one of {known}")
    except ReportInputError as error:
        return fail(prog, error)
    print(path)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``export`` subcommand."""
    parser = subparsers.add_parser(
        "export",
        help="a benchmark's leaderboard file (e.g. hallusionbench) or a CSV of every metric (csv)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", metavar="BENCHMARK", help="a benchmark with leaderboard files, or csv")
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="harness output folder(s)")
    parser.add_argument("--out", type=Path, required=True, help="output file")
    parser.add_argument("--task", default=None, help="the task whose file to export (when several)")
    parser.set_defaults(handler=_run)
