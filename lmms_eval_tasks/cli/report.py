"""`lmms-eval-tasks report RUN_DIR... --out DIR`: report.html and report.md over one or more harness runs.

Each RUN_DIR is a harness output folder (``--output_path``), a model folder below it, a pack folder
``.../lmms_eval_tasks`` or one run folder ``.../lmms_eval_tasks/<run_id>``; every pack folder below it
counts, at any depth. Each (model, model args) is one run, with the newest report of each task; what is
left out (older reports of the same setup, unreadable reports, tasks whose scoring failed) is printed.
The HTML is self-contained (tables, PNG plots as data URIs, no scripts).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.human_report import ReportInputError, write_report_for_runs

    skipped: list[str] = []
    try:
        path = write_report_for_runs(args.run_dirs, args.out, skipped)
    except ReportInputError as error:
        for note in skipped:
            print(f"lmms-eval-tasks report: skipped {note}", file=sys.stderr)
        print(f"lmms-eval-tasks report: {error}", file=sys.stderr)
        return 2
    for note in skipped:
        print(f"lmms-eval-tasks report: skipped {note}", file=sys.stderr)
    print(path)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand."""
    parser = subparsers.add_parser(
        "report",
        help="report.html / report.md over harness runs: tables, plots, published rows, provenance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR", help="harness output, model, pack or run folder"
    )
    parser.add_argument(
        "--out", type=Path, required=True, help="folder for report.html, report.md and plots/"
    )
    parser.set_defaults(handler=_run)
