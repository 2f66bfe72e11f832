"""`lmms-eval-tasks slim KIND --input FULL.json [...] --out SLIM.json`: rebuild or resize a "slim" subset.

Applies the paper's stratified rule with a seed to the full dataset and prints
the per-question-type counts (the paper's Tables 7-9). Several ``--input`` files are sampled separately
and concatenated (the authors sample DVQA's val_easy and val_hard files apart). TDIUC's full release comes
as two files: pass ``--questions`` and ``--annotations`` instead of ``--input``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.framework.input_checks import RecordError
    from lmms_eval_tasks.framework.preparing import read_annotations
    from lmms_eval_tasks.tasks.revisiting.slim import KINDS, format_counts, merge_tdiuc, slim

    prog = "lmms-eval-tasks slim"
    kind = KINDS[args.kind]
    try:
        if args.questions or args.annotations:
            if args.kind != "tdiuc" or not (args.questions and args.annotations):
                print(f"{prog}: --questions/--annotations (together) are for tdiuc only", file=sys.stderr)
                return 2
            inputs = [
                merge_tdiuc(
                    json.loads(Path(args.questions).read_text(encoding="utf-8")),
                    json.loads(Path(args.annotations).read_text(encoding="utf-8")),
                )
            ]
        elif args.input:
            inputs = [read_annotations(path) for path in args.input]
        else:
            print(f"{prog}: give --input (or, for tdiuc, --questions and --annotations)", file=sys.stderr)
            return 2
        kept: list[dict[str, Any]] = []
        counts: dict[str, list[int]] = {}
        for offset, entries in enumerate(inputs):
            result = slim(
                entries,
                kind,
                ratio=args.ratio,
                minimum=args.min,
                seed=args.seed + offset,
                group_by=args.group_by,
                rounding=args.rounding,
            )
            kept.extend(result.entries)
            for name, pair in result.counts.items():  # (total, kept), summed over the input files
                counts[name] = [sum(values) for values in zip(counts.get(name, (0, 0)), pair, strict=True)]
    except (FileNotFoundError, KeyError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    except (RecordError, ValueError) as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(out)
    ratio = kind.ratio if args.ratio is None else args.ratio
    minimum = kind.minimum if args.min is None else args.min
    print(
        f"{args.kind}: kept {len(kept)} of {sum(t for t, _ in counts.values())} (r={ratio}, k={minimum}, "
        f"seed={args.seed}, group by {args.group_by}, rounding {args.rounding}) -> {out}"
    )
    print(format_counts({name: (total, chosen) for name, (total, chosen) in counts.items()}))
    return 0


def register(subparsers: Any) -> None:
    """Add the ``slim`` subcommand."""
    from lmms_eval_tasks.tasks.revisiting.slim import KINDS

    parser = subparsers.add_parser(
        "slim",
        help="the paper's stratified 'slim' sampling, seeded, with per-type counts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=sorted(KINDS), help="dataset")
    parser.add_argument("--input", action="append", type=Path, help="full annotation file (repeatable)")
    parser.add_argument("--questions", type=Path, help="tdiuc: OpenEnded_mscoco_val2014_questions.json")
    parser.add_argument("--annotations", type=Path, help="tdiuc: mscoco_val2014_annotations.json")
    parser.add_argument("--out", required=True, type=Path, help="where to write the slim JSON list")
    parser.add_argument("--ratio", type=float, help="sampling ratio r (default: the paper's for the dataset)")
    parser.add_argument("--min", type=int, help="minimum per group k (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (recorded in the printed summary)")
    parser.add_argument(
        "--group-by",
        choices=("type+answer", "type"),
        default="type+answer",
        help="strata: question type and answer (the paper, default) or type only (the authors' scripts)",
    )
    parser.add_argument(
        "--rounding",
        choices=("paper", "official"),
        default="paper",
        help="group sizes: ceil(m*r) per group (the paper, default) or int(int(r*N)*m/N) (the authors' "
        "scripts; with --group-by type it gives the released subset sizes)",
    )
    parser.set_defaults(handler=_run)
