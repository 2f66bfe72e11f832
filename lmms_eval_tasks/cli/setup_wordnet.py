"""`lmms-eval-tasks setup-wordnet`: make Debian's WordNet files readable by nltk (offline)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _command_setup_wordnet(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.wordnet import check_wordnet_loads, ensure_wordnet

    try:
        how = ensure_wordnet(args.target, source=args.source)
        summary = check_wordnet_loads(args.target)
    except (FileNotFoundError, RuntimeError) as error:
        print(f"lmms-eval-tasks setup-wordnet: {error}", file=sys.stderr)
        return 1
    print(how)
    print(summary)
    return 0


def register(subparsers: Any) -> None:
    """Add the `setup-wordnet` subcommand."""
    wordnet = subparsers.add_parser(
        "setup-wordnet", help="WordNet for nltk: found, copied from Debian's wordnet-base, or downloaded"
    )
    wordnet.add_argument(
        "--target",
        type=Path,
        default=None,
        help="nltk data folder to write into (default: $NLTK_DATA, else $LMMS_EVAL_TASKS_CACHE/nltk_data)",
    )
    wordnet.add_argument("--source", type=Path, default=Path("/usr/share/wordnet"))
    wordnet.set_defaults(handler=_command_setup_wordnet)
