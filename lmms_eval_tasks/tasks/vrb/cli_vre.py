"""`lmms-eval-tasks vre`: VRB robustness metrics and VRE for a pool of models, from a CSV or run folders.

INPUT is a CSV with columns ``model,corruption,severity,accuracy`` (accuracy a fraction; severity 0 is the
clean level, given once per model as corruption ``clean`` or repeated per corruption) or an output folder
of harness runs of ``vrb`` / ``vrb_sample`` tasks or of a ``robustness`` group (every ``*_results.json``
under it is read). ``NAME=PATH`` names the model of a folder. Prints JSON ``{"models": ..., "corruptions":
..., "pool": ..., "notes": ...}``; ``--plots DIR`` writes error-vs-severity curves and radar charts (PNG).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

CSV_COLUMNS = ("model", "corruption", "severity", "accuracy")
METADATA_KEY = "vrb_level"  # robustness task YAML: metadata.vrb_level = {corruption, severity, profile, ...}


class InputError(ValueError):
    """An input file or folder cannot be read as a pool of per-level accuracies."""


Row = tuple[str, str, int, float, str]  # model, corruption, severity, accuracy, source (for messages)


def _number(part: str) -> float:
    """A number, or ``ln<number>`` for its natural logarithm (``ln6`` = 1.7918, as the paper writes)."""
    part = part.strip()
    if part.lower().startswith("ln"):
        argument = float(part[2:])
        if not argument > 0:
            raise ValueError(part)
        return math.log(argument)
    return float(part)


def _floats(text: str, option: str) -> list[float]:
    try:
        values = [_number(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{option}: expected 5 comma-separated numbers (or ln<number>, e.g. ln6), got {text!r}"
        ) from None
    if len(values) != 5:
        raise argparse.ArgumentTypeError(
            f"{option}: expected 5 numbers (F, R, rho, mu, Delta), got {len(values)}"
        )
    return values


def register(subparsers: Any) -> None:
    """Add the ``vre`` subcommand."""
    parser = subparsers.add_parser(
        "vre",
        help="VRB robustness metrics and VRE for a pool of models (CSV or harness output folders)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "inputs", nargs="+", metavar="INPUT", help="CSV file or run folder; NAME=PATH names a folder's model"
    )
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument(
        "--weights",
        type=lambda text: _floats(text, "--weights"),
        help="w1,...,w5 for F,R,rho,mu,Delta (sum 1)",
    )
    weights.add_argument(
        "--preferences",
        type=lambda text: _floats(text, "--preferences"),
        help="p1,...,p5: weights = softmax(p) (default: all 0, i.e. 0.2 each); ln<x> is log(x): "
        "ln6,0,0,0,0 gives the paper's 0.6/0.1 example",
    )
    parser.add_argument(
        "--metric",
        default=None,
        help="run folders: metric key(s), comma-separated; a task uses the first it has (default: accuracy)",
    )
    parser.add_argument(
        "--scale",
        default="1",
        help="divide accuracies by this (100 for percentages), CSV and run folders; per source task of a "
        "run folder: TASK=100,TASK2=1 (a CSV uses the plain number)",
    )
    parser.add_argument("--plots", type=Path, default=None, help="folder for PNG plots")
    parser.add_argument("--cells", action="store_true", help="also print every (model, corruption) cell")
    parser.set_defaults(handler=run)


def read_csv(path: Path, scale: str | float = 1.0) -> list[Row]:
    """Rows of a ``model,corruption,severity,accuracy`` CSV (errors name the file and line); accuracies are
    divided by ``scale`` (its plain number; ``TASK=N`` parts are for run folders)."""
    divisor = parse_scale(scale).get("", 1.0)
    rows: list[Row] = []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [column for column in CSV_COLUMNS if column not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"{path}: missing column(s) {missing}; expected {','.join(CSV_COLUMNS)}")
        for line, row in enumerate(reader, start=2):
            where = f"{path}:{line}"
            try:
                severity = int(row["severity"])
                accuracy = float(row["accuracy"])
            except (TypeError, ValueError):
                raise InputError(
                    f"{where}: severity must be an integer and accuracy a number: {row}"
                ) from None
            model, corruption = (row["model"] or "").strip(), (row["corruption"] or "").strip()
            if not model or not corruption:
                raise InputError(f"{where}: empty model or corruption")
            rows.append((model, corruption, severity, accuracy / divisor, where))
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def _model_label(results: dict[str, Any]) -> str:
    config = results.get("config") or {}
    model = str(config.get("model") or results.get("model_name") or "model")
    model_args = str(config.get("model_args") or "")
    arguments = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    if arguments.get("pretrained"):
        return f"{model}:{arguments['pretrained']}"
    return f"{model}:{model_args}" if model_args else model


def _task_level(task: str, config: dict[str, Any]) -> tuple[str, int, str] | None:
    """(corruption, severity, source task) of a result, from robustness metadata or a VRB task name."""
    metadata = config.get("metadata") if isinstance(config, dict) else None
    level = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if isinstance(level, dict) and "corruption" in level and "severity" in level:
        return str(level["corruption"]), int(level["severity"]), str(level.get("source_task") or "")
    from lmms_eval_tasks.tasks.vrb.hooks import LEVEL_TASK  # vrb[_sample]_clean, vrb[_sample]_<name>_s<k>

    match = LEVEL_TASK.match(task)
    if match is None:
        return None
    if match["clean"]:
        return "clean", 0, ""
    return match["corruption"], int(match["severity"]), ""


def parse_scale(text: str | float) -> dict[str, float]:
    """``"100"`` -> {"": 100.0}; ``"a=100,b=1"`` -> per source task (the empty key is the default)."""
    scales: dict[str, float] = {}
    for part in str(text).split(","):
        key, _, value = part.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"--scale: {part!r} is not a number or TASK=number") from None
        if not 0 < number < math.inf:  # inf would turn every accuracy into 0 without a word
            raise InputError(f"--scale: {part!r} must be a positive finite number")
        scales[key.strip()] = number
    return scales


def _metric_value(task: str, values: dict[str, Any], metric: str | None, where: str) -> float:
    candidates = {
        key.split(",")[0]: value for key, value in values.items() if "_stderr" not in key and "," in key
    }
    names = [name.strip() for name in (metric or "accuracy").split(",") if name.strip()]
    name = next((name for name in names if name in candidates), None)
    if name is None:
        numeric = sorted(key for key, value in candidates.items() if isinstance(value, int | float))
        raise InputError(f"{where}: task {task} has none of {names}; pick with --metric: {numeric}")
    value = candidates[name]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InputError(f"{where}: task {task}: {name} is {value!r}, not a number")
    return float(value)


def read_run_folder(path: Path, label: str | None, metric: str | None, scale: str | float = 1.0) -> list[Row]:
    """Rows from every ``*_results.json`` under a harness output folder (VRB or robustness tasks)."""
    files = sorted(path.rglob("*_results.json"))
    if not files:
        raise InputError(f"{path}: no *_results.json under this folder (is it a harness --output_path?)")
    scales = parse_scale(scale)
    rows: list[Row] = []
    for file in files:
        results = json.loads(file.read_text(encoding="utf-8"))
        model = label or _model_label(results)
        configs = results.get("configs") or {}
        groups = set(results.get("groups") or {}) | set(results.get("group_subtasks") or {})
        for task, values in (results.get("results") or {}).items():
            if task in groups:
                continue
            level = _task_level(task, configs.get(task) or {})
            if level is None:
                continue
            corruption, severity, source = level
            divisor = scales.get(source or task, scales.get("", 1.0))
            value = _metric_value(task, values, metric, str(file)) / divisor
            rows.append(
                (f"{model}/{source}" if source else model, corruption, severity, value, f"{file}: {task}")
            )
    if not rows:
        raise InputError(f"{path}: no VRB or robustness task in its results files {[str(f) for f in files]}")
    return rows


def read_inputs(inputs: Sequence[str], metric: str | None = None, scale: str | float = 1.0) -> list[Row]:
    """Rows from every INPUT (CSV file, run folder, or NAME=run folder)."""
    rows: list[Row] = []
    for item in inputs:
        label, path_text = item.split("=", 1) if "=" in item and not Path(item).exists() else (None, item)
        path = Path(path_text)
        if path.is_dir():
            rows.extend(read_run_folder(path, label, metric, scale))
        elif path.is_file():
            if label:
                raise InputError(f"{item}: NAME= applies to run folders; a CSV names its models in a column")
            rows.extend(read_csv(path, scale))
        else:
            raise InputError(f"{path}: no such file or folder")
    return rows


def pool_table(rows: Iterable[Row]) -> dict[str, dict[str, list[float]]]:
    """``{model: {corruption: [A_0, ..., A_5]}}`` from rows, clean rows for every corruption of a model;
    InputError on an accuracy outside [0, 1], conflicting duplicates, a missing severity or clean level."""
    clean: dict[str, dict[str, tuple[float, str]]] = {}  # model -> corruption ("clean" or a name) -> value
    levels: dict[str, dict[str, dict[int, tuple[float, str]]]] = {}
    for model, corruption, severity, accuracy, where in rows:
        if not 0.0 <= accuracy <= 1.0 or math.isnan(accuracy):
            raise InputError(
                f"{where}: accuracy {accuracy} is not a fraction in [0, 1] (use --scale 100 for %)"
            )
        if not 0 <= severity <= 5:
            raise InputError(f"{where}: severity {severity} outside 0..5")
        if corruption == "clean" and severity != 0:
            raise InputError(f"{where}: corruption 'clean' must have severity 0")
        target = (
            clean.setdefault(model, {})
            if severity == 0
            else levels.setdefault(model, {}).setdefault(corruption, {})
        )
        key = corruption if severity == 0 else severity
        if key in target and abs(target[key][0] - accuracy) > 1e-9:
            raise InputError(f"{where}: conflicts with {target[key][1]} ({target[key][0]} vs {accuracy})")
        target[key] = (accuracy, where)
    table: dict[str, dict[str, list[float]]] = {}
    for model in sorted(set(clean) | set(levels)):
        model_clean = clean.get(model, {})
        distinct = {round(value, 12) for value, _ in model_clean.values()}
        if len(distinct) > 1:
            raise InputError(
                f"model {model!r}: different clean accuracies {sorted(distinct)} (severity 0 rows)"
            )
        if not model_clean:
            raise InputError(f"model {model!r}: no clean level (severity 0)")
        clean_value = next(iter(model_clean.values()))[0]
        table[model] = {}
        for corruption, by_severity in sorted(levels.get(model, {}).items()):
            missing = [k for k in range(1, 6) if k not in by_severity]
            if missing:
                raise InputError(f"model {model!r}, corruption {corruption!r}: missing severities {missing}")
            table[model][corruption] = [clean_value, *(by_severity[k][0] for k in range(1, 6))]
        if not table[model]:
            raise InputError(f"model {model!r}: only a clean level, no corrupted levels")
    return table


def write_plots(table: dict[str, dict[str, list[float]]], result: dict[str, Any], folder: Path) -> list[Path]:
    """The report's plots of the pool (``report_section``): error vs severity per model, a line per
    corruption, and with VRE the radars of the scaled sub-metrics per model and per corruption class."""
    from lmms_eval_tasks.corruptions import CATEGORIES
    from lmms_eval_tasks.reporting.sections import SectionContext, lines
    from lmms_eval_tasks.tasks.vrb.report_section import radar_plot, scaled_means

    errors, radars = (SectionContext(None, [], prefix) for prefix in ("error_vs_severity", "radar"))
    plots = [
        lines(
            f"Error vs severity: {model}",
            errors.plot_name(model),
            {
                corruption: (range(6), [1 - value for value in accuracy])
                for corruption, accuracy in curves.items()
            },
            "severity (0 = clean)",
            "error (1 - accuracy)",
            ylim=(0.0, 1.0),
        )
        for model, curves in table.items()
    ]
    if result["pool"]["vre_computed"]:
        cells, corruptions = result["cells"], result["pool"]["corruptions"]
        classes: dict[str, list[str]] = {}
        for corruption in corruptions:
            classes.setdefault(CATEGORIES.get(corruption, "other"), []).append(corruption)
        per_model = {model: scaled_means(cells, [(model, c) for c in corruptions]) for model in table}
        per_class = {
            name: scaled_means(cells, [(m, c) for m in table for c in members])
            for name, members in classes.items()
        }
        plots.append(radar_plot(radars, per_model, "Scaled sub-metrics per model", "models"))
        plots.append(
            radar_plot(radars, per_class, "Scaled sub-metrics per corruption class", "corruption_classes")
        )
    folder.mkdir(parents=True, exist_ok=True)
    for plot in plots:
        (folder / plot.name).write_bytes(plot.png)
    return [folder / plot.name for plot in plots]


def compute(
    inputs: Sequence[str],
    weights: Sequence[float] | None = None,
    preferences: Sequence[float] | None = None,
    metric: str | None = None,
    scale: str | float = 1.0,
) -> tuple[dict[str, dict[str, list[float]]], dict[str, Any]]:
    """The pool table and the full robustness result (models, corruptions, cells, pool, notes)."""
    from lmms_eval_tasks.tasks.vrb.scoring import robustness

    table = pool_table(read_inputs(inputs, metric=metric, scale=scale))
    return table, robustness(table, weights=weights, preferences=preferences)


def run(args: argparse.Namespace) -> int:
    """Handler of ``lmms-eval-tasks vre``."""
    try:
        table, result = compute(args.inputs, args.weights, args.preferences, args.metric, args.scale)
    except (InputError, ValueError, json.JSONDecodeError) as error:
        print(f"lmms-eval-tasks vre: {error}", file=sys.stderr)
        return 2
    output = {key: result[key] for key in ("models", "corruptions", "pool", "notes")}
    if args.cells:
        output["cells"] = result["cells"]
    if args.plots is not None:
        output["plots"] = [str(path) for path in write_plots(table, result, args.plots)]
    print(json.dumps(output, indent=2, allow_nan=False))
    return 0
