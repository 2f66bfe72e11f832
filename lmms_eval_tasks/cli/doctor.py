"""`lmms-eval-tasks doctor`: what works on this machine and what does not, each failing line with its fix."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.doctor import report, run_checks

    checks = run_checks(all_models=args.all_models, tiny_llava=args.tiny_llava, verbose=args.verbose)
    return report(checks, as_json=args.json)


def register(subparsers: Any) -> None:
    """Add the `doctor` subcommand."""
    parser = subparsers.add_parser(
        "doctor",
        help="check the setup: host version and patches, torch, WordNet, tiny LLaVA, judge, datasets, models",
        description=(
            "Check what works on this machine; exit 1 when a required check fails (host version and "
            "patches, torch/transformers, WordNet, tiny LLaVA, the pack's models). The judge endpoint, "
            "dataset cache and host model wrappers are informational."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument(
        "--all-models",
        action="store_true",
        help="check every host model wrapper (default: a short list of commonly used ones)",
    )
    parser.add_argument(
        "--tiny-llava",
        type=Path,
        default=None,
        help="tiny LLaVA folder to check (default: $LMMS_EVAL_TASKS_CACHE/tiny-llava)",
    )
    parser.add_argument("--verbose", action="store_true", help="show the host's import-time log output")
    parser.set_defaults(handler=_run)
