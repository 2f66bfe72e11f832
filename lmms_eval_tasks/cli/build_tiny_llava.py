"""`lmms-eval-tasks build-tiny-llava`: the tiny random LLaVA used by the demo and tests (offline)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _command_build_tiny_llava(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.models.tiny_llava import build_tiny_llava

    path = build_tiny_llava(args.output, seed=args.seed)
    print(path)
    print(f"--model llava_hf --model_args pretrained={path},device=cpu,device_map=cpu", file=sys.stderr)
    return 0


def register(subparsers: Any) -> None:
    """Add the `build-tiny-llava` subcommand."""
    tiny = subparsers.add_parser("build-tiny-llava", help="build the tiny random LLaVA (offline)")
    tiny.add_argument("--output", required=True, type=Path, help="folder to write the model to")
    tiny.add_argument("--seed", type=int, default=0, help="seed for the random weights (default 0)")
    tiny.set_defaults(handler=_command_build_tiny_llava)
