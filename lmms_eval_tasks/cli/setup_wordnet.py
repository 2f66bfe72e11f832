"""`lmms-eval-tasks setup-wordnet`: make Debian's WordNet files readable by nltk (offline)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


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


def register(subparsers: Any) -> None:
    """Add the `setup-wordnet` subcommand."""
    wordnet = subparsers.add_parser("setup-wordnet", help="WordNet for nltk from Debian's wordnet-base")
    wordnet.add_argument("--target", type=Path, required=True, help="nltk data folder to write into")
    wordnet.add_argument("--source", type=Path, default=Path("/usr/share/wordnet"))
    wordnet.set_defaults(handler=_command_setup_wordnet)
