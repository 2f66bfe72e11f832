"""`lmms-eval-tasks report RUN_DIR... --out DIR`: report.html and report.md over one or more harness runs.

Every pack folder under each RUN_DIR counts; each (model, model args) is a run with the newest report of
each task, what is left out is printed. A run of a published model gets a Reproduction section (reports.md
and comparing-with-papers.md in the pack's documentation).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    import json

    from lmms_eval_tasks.human_report import ReportInputError, load_runs, report_json, write_report

    skipped: list[str] = []
    try:
        runs = load_runs(args.run_dirs, skipped)
        path = write_report(runs, args.out, published_as=args.published_as)
    except ReportInputError as error:
        for note in skipped:
            print(f"lmms-eval-tasks report: skipped {note}", file=sys.stderr)
        print(f"lmms-eval-tasks report: {error}", file=sys.stderr)
        return 2
    for note in skipped:
        print(f"lmms-eval-tasks report: skipped {note}", file=sys.stderr)
    if args.json:
        print(json.dumps({"report": str(path), **report_json(runs, args.published_as)}, indent=2))
    else:
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
    parser.add_argument(
        "--published-as",
        metavar="NAME",
        default=None,
        help="compare every run with the published model NAME (e.g. LLaVA-1.5-7B) instead of matching "
        "it by checkpoint; the report records that the match was made this way",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the report's path, runs and reproduction verdicts as JSON instead of the path",
    )
    parser.set_defaults(handler=_run)
