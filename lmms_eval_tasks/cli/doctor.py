"""`lmms-eval-tasks doctor`: what works on this machine and what does not, each failing line with its fix."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.doctor import report, run_checks

    checks = run_checks(
        all_models=args.all_models,
        tiny_llava=args.tiny_llava,
        verbose=args.verbose,
        dev=args.dev,
        judge=args.judge,
        include_paths=args.include_path,
    )
    return report(checks, as_json=args.json)


def register(subparsers: Any) -> None:
    """Add the `doctor` subcommand."""
    parser = subparsers.add_parser(
        "doctor",
        help="check the setup: host and patches, torch, per-benchmark needs, datasets, models, dev fixtures",
        description=(
            "Check what works on this machine; exit 1 when a required check fails (what every run needs: "
            "host version and patches, torch/transformers, the pack's models). Per-benchmark needs (WordNet "
            "for TDIUC, the judge endpoint for judged tasks), the dataset cache and host model wrappers are "
            "informational; the development fixture (tiny LLaVA) is required only with --dev."
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
    parser.add_argument(
        "--dev", action="store_true", help="also require the development set-up (`make setup`'s tiny LLaVA)"
    )
    parser.add_argument("--verbose", action="store_true", help="show the host's import-time log output")
    parser.add_argument(
        "--include_path",
        action="append",
        default=[],
        help="a task folder your runs pass to --include_path: its tasks' datasets are checked instead of "
        "the pack's tasks of the same name (a local copy runs offline)",
    )
    parser.add_argument(
        "--judge",
        action="store_true",
        help="also run the judge self-test on the bundled samples (spends about 40 judge calls)",
    )
    parser.set_defaults(handler=_run)
