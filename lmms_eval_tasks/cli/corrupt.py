"""``lmms-eval-tasks corrupt ...``: list corruptions, corrupt an image, a dataset, or draw a contact sheet.

``corrupt_cli(argv)`` runs the same commands standalone (``python -m lmms_eval_tasks.cli.corrupt ...``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lmms_eval_tasks.corruptions.tables import PROFILES, SEVERITY_TABLES


def _names(value: str, profile: str) -> list[str]:
    if value == "all":
        return list(SEVERITY_TABLES[profile])
    return [name.strip() for name in value.split(",") if name.strip()]


def _severities(value: str) -> list[int]:
    if value == "all":
        return [1, 2, 3, 4, 5]
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"severities must be integers 1..5 or 'all', got {value!r}"
        ) from error


def _add_common(parser: argparse.ArgumentParser, many: bool) -> None:
    parser.add_argument("--profile", choices=PROFILES, default="vrb", help="severity table and algorithms")
    parser.add_argument("--seed", type=int, default=0, help="base seed (each image mixes in its pixels)")
    if many:
        parser.add_argument("--name", required=True, help="corruption name(s), comma-separated, or 'all'")
        parser.add_argument("--severity", default="all", help="severities, comma-separated, or 'all'")
    else:
        parser.add_argument("--name", required=True, help="corruption name")
        parser.add_argument("--severity", type=int, required=True, help="severity 1..5")


def register(subparsers: Any) -> None:
    """Add the ``corrupt`` subcommand (with its own sub-commands)."""
    parser = subparsers.add_parser(
        "corrupt",
        help="image corruptions: list, image, dataset, sheet",
        description="Apply the pack's image corruptions (profiles vrb and imagenet_c).",
    )
    commands = parser.add_subparsers(dest="corrupt_command", required=True)

    listing = commands.add_parser("list", help="corruptions and severity tables of a profile")
    listing.add_argument("--profile", choices=PROFILES, default="vrb")
    listing.add_argument("--json", action="store_true", help="print the table as JSON")

    single = commands.add_parser("image", help="corrupt one image file")
    single.add_argument("input", help="image file")
    single.add_argument("output", help="output image file (PNG keeps the pixels exact)")
    _add_common(single, many=False)

    dataset = commands.add_parser("dataset", help="materialise corrupted copies of a Hugging Face dataset")
    dataset.add_argument("input", help="load_from_disk folder, or a .parquet/.json/.jsonl/.csv data file")
    dataset.add_argument("--image-column", default="image", help="column holding the image(s)")
    dataset.add_argument("--split", default=None, help="split of a DatasetDict folder (default: all splits)")
    dataset.add_argument("--num-proc", type=int, default=1, help="worker processes for datasets.map")
    dataset.add_argument("--cache-dir", default=None, help="cache root (default: ~/.cache/lmms_eval_tasks)")
    dataset.add_argument(
        "--output", default=None, help="also save each copy to OUTPUT/<profile>/<name>/severity_<n>"
    )
    _add_common(dataset, many=True)

    sheet = commands.add_parser("sheet", help="contact sheet PNG: one image x corruptions x severities")
    sheet.add_argument("output", help="output PNG")
    sheet.add_argument("--input", default=None, help="image file (default: scikit-image's astronaut, CC0)")
    sheet.add_argument("--profile", choices=PROFILES, default="vrb")
    sheet.add_argument("--seed", type=int, default=0)
    sheet.add_argument("--size", type=int, default=224, help="the image is resized to this width first")
    sheet.add_argument("--tile", type=int, default=128, help="tile width in the sheet")
    sheet.add_argument("--palette", action="store_true", help="save with a 256-colour palette (smaller file)")

    parser.set_defaults(handler=run)


def _load_image(path: str) -> Any:
    from PIL import Image

    from lmms_eval_tasks.corruptions.engine import to_rgb_image

    with Image.open(path) as image:
        return to_rgb_image(image)  # 16-bit and float images scaled or refused, never clipped


def run(args: argparse.Namespace) -> int:
    """Execute a parsed ``corrupt`` command; returns the exit code (2 with a one-line error for bad input)."""
    try:
        command = args.corrupt_command
        if command == "list":
            table = SEVERITY_TABLES[args.profile]
            if args.json:
                print(json.dumps(table, indent=2))
            else:
                for name, rows in table.items():
                    print(f"{name:<20} {rows}")
            return 0
        if command == "image":
            from lmms_eval_tasks.corruptions.dataset import corrupt_visual

            image = _load_image(args.input)
            corrupt_visual(image, args.name, args.severity, args.seed, args.profile).save(args.output)
            print(args.output)
            return 0
        if command == "dataset":
            return _run_dataset(args)
        return _run_sheet(args)  # the one command left (argparse refuses any other)
    except (ValueError, KeyError, OSError) as error:  # OSError covers missing and unreadable files
        print(f"error: {error}", file=sys.stderr)
        return 2


def _run_dataset(args: argparse.Namespace) -> int:
    from loguru import logger

    from lmms_eval_tasks.corruptions.dataset import load_any, materialize
    from lmms_eval_tasks.corruptions.engine import check_request

    names = _names(args.name, args.profile)
    severities = _severities(args.severity)
    for name in names:  # validate everything before any work
        for severity in severities:
            check_request(name, severity, args.profile)
    source = load_any(args.input, args.split)
    for name in names:
        for severity in severities:
            how = (args.seed, args.profile, args.num_proc, args.cache_dir)
            corrupted = materialize(source, args.image_column, name, severity, *how)
            if args.output:
                target = Path(args.output) / args.profile / name / f"severity_{severity}"
                corrupted.save_to_disk(str(target))
                logger.info(f"saved {target}")
                print(target)
            else:
                print(_cache_location(corrupted))
    return 0


def _cache_location(dataset: Any) -> str:
    files = getattr(dataset, "cache_files", None)
    if isinstance(files, dict):  # DatasetDict
        files = next(iter(files.values()), [])
    return str(Path(files[0]["filename"]).parent) if files else "(in memory)"


def _run_sheet(args: argparse.Namespace) -> int:
    from PIL import Image

    from lmms_eval_tasks.corruptions.sheet import contact_sheet

    if args.input:
        image = _load_image(args.input)
    else:
        from skimage import data

        image = Image.fromarray(data.astronaut())
    height = max(1, round(args.size * image.height / image.width))
    image = image.resize((args.size, height), Image.BOX)
    sheet = contact_sheet(image, profile=args.profile, seed=args.seed, tile=args.tile)
    if args.palette:
        sheet = sheet.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    sheet.save(args.output, optimize=True)
    print(args.output)
    return 0


def corrupt_cli(argv: list[str] | None = None) -> int:
    """Run ``corrupt`` sub-commands without the pack's top-level CLI (e.g. ``corrupt_cli(["list"])``)."""
    parser = argparse.ArgumentParser(prog="lmms-eval-tasks")
    subparsers = parser.add_subparsers(dest="command", required=True)
    register(subparsers)
    args = parser.parse_args(["corrupt", *(sys.argv[1:] if argv is None else argv)])
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(corrupt_cli())
