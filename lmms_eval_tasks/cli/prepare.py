"""`lmms-eval-tasks prepare <kind> ...`: released annotations + your images -> an HF dataset on disk.

One sub-command per dataset kind (tdiuc, tallyqa, dvqa, vqdv1, contextual), `lmms-eval-tasks prepare KIND
--help` for its inputs. Example:

  lmms-eval-tasks prepare tdiuc --annotations TDIUC_sampling.json --images coco/ --out data/tdiuc
  export LMMS_EVAL_TASKS_DATA_TDIUC=data/tdiuc
  lmms_eval --tasks tdiuc --model llava_hf ...
"""

from __future__ import annotations

import argparse
from typing import Any


def _no_kind(args: argparse.Namespace) -> int:
    args.prepare_parser.print_help()
    return 2


def register(subparsers: Any) -> None:
    """Add ``prepare`` with one sub-command per registered dataset kind."""
    from lmms_eval_tasks.framework.preparing import env_var, preparers

    parser = subparsers.add_parser(
        "prepare",
        help="turn a released annotation file + image folder into a dataset the pack's task loads",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=_no_kind, prepare_parser=parser)
    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    for name, preparer in sorted(preparers().items()):
        sub = kinds.add_parser(
            name, help=preparer.help, description=f"{preparer.help}\nThe task reads it from ${env_var(name)}."
        )
        preparer.add_arguments(sub)
        sub.set_defaults(handler=preparer.run)
