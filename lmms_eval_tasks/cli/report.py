"""`lmms-eval-tasks report RUN_DIR... --out DIR`: report.html and report.md over one or more harness runs.

Each RUN_DIR is a harness output folder (``--output_path``), a model folder below it, a pack folder
``.../lmms_eval_tasks`` (the latest complete report of each task) or one run folder
``.../lmms_eval_tasks/<run_id>``. The HTML is self-contained (tables, PNG plots as data URIs, no scripts).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.reporting.human_report import ReportInputError, write_report_for_runs

    try:
        path = write_report_for_runs(args.run_dirs, args.out)
    except ReportInputError as error:
        print(f"lmms-eval-tasks report: {error}", file=sys.stderr)
        return 2
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
