"""`lmms-eval-tasks score BENCHMARK FILE`: re-score saved predictions without running a model.

When FILE is the records file of a run whose scoring failed (a ``<task>_pending.json`` sits next to it,
e.g. the judge refused every call), the records are scored as that run would have and the run's report is
written into its folder (docs/reports.md, "When judging fails")."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from lmms_eval_tasks.cli._arguments import json_safe, parse_option


def report_options(path: Path, benchmark: str) -> dict[str, Any]:
    """The options a run used, from its pack report (``provenance.settings``: ``score_options``, then
    ``uncertainty_options``)."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"--options-from {path}: cannot read the report ({error})") from None
    if not isinstance(report, dict) or "provenance" not in report:
        raise ValueError(
            f"--options-from {path}: not a pack report (no 'provenance'); give a <task>_report.json"
        )
    if report.get("benchmark") != benchmark:
        raise ValueError(f"--options-from {path}: a {report.get('benchmark')!r} report, not {benchmark!r}")
    settings = report["provenance"].get("settings") or {}
    options = settings.get("score_options")
    if not isinstance(options, dict):
        raise ValueError(
            f"--options-from {path}: provenance.settings.score_options is missing (a report written before "
            "the pack recorded its options); pass them with -o KEY=VALUE"
        )
    return {**options, **(settings.get("uncertainty_options") or {})}


def _command_score(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.framework.input_checks import RecordError, read_jsonl_numbered
    from lmms_eval_tasks.framework.registry import benchmarks, get_benchmark
    from lmms_eval_tasks.framework.saved_records import pending_for
    from lmms_eval_tasks.framework.targets import resolve
    from lmms_eval_tasks.framework.task_pipeline import complete_pending
    from lmms_eval_tasks.judges.pipeline import JudgingFailed

    if args.benchmark not in benchmarks():
        known = ", ".join(sorted(benchmarks()))
        print(f"lmms-eval-tasks score: unknown benchmark {args.benchmark!r}; known: {known}", file=sys.stderr)
        return 2
    path = Path(args.records)
    if path.is_dir():
        print(f"lmms-eval-tasks score: {path} is a directory, not a JSON-lines file", file=sys.stderr)
        return 2
    if not path.is_file():
        print(f"lmms-eval-tasks score: no such file: {path}", file=sys.stderr)
        return 2
    # Options before records: a bad -o exits 2 whatever the file holds (names against the scorer's
    # signature, then the bootstrap options, then the values by the benchmark's option check).
    from lmms_eval_tasks.framework.intervals import OPTION_NAMES, attach_intervals, split_options

    benchmark = get_benchmark(args.benchmark)
    scorer = resolve(benchmark.scorer)
    options: dict[str, Any] = {}
    if args.options_from:
        try:
            options.update(report_options(Path(args.options_from), args.benchmark))
        except ValueError as error:
            print(f"lmms-eval-tasks score: {error}", file=sys.stderr)
            return 2
    options.update(dict(args.option or []))  # -o wins over the report's options
    try:
        own = {key: value for key, value in options.items() if key not in OPTION_NAMES}
        inspect.signature(scorer).bind([], **own)
    except TypeError as error:
        print(f"lmms-eval-tasks score: bad option for {args.benchmark}: {error}", file=sys.stderr)
        return 2
    try:
        scoring_options = split_options(options)[0]  # bootstrap_resamples / bootstrap_seed
        benchmark.check_options(**scoring_options)
    except ValueError as error:  # scoring.OptionError, one line
        print(f"lmms-eval-tasks score: {args.benchmark}: {error}", file=sys.stderr)
        return 2
    lines: list[int] = []
    try:
        try:
            records, lines = read_jsonl_numbered(path)
        except OSError as error:  # unreadable file (permissions, I/O)
            print(f"lmms-eval-tasks score: cannot read {path}: {error.strerror or error}", file=sys.stderr)
            return 2
        if not records:
            raise RecordError("-", "<file>", f"{path} holds no records")
        benchmark.validate(records, lines=lines)  # the record contract
        try:
            pending = pending_for(path)
        except ValueError as error:
            print(f"lmms-eval-tasks score: {error}", file=sys.stderr)
            return 2
        if pending is not None and pending.get("benchmark") != args.benchmark:
            print(
                f"lmms-eval-tasks score: {path} holds {pending.get('benchmark')} records of task "
                f"{pending.get('task')}: run `lmms-eval-tasks score {pending.get('benchmark')} {path}`",
                file=sys.stderr,
            )
            return 2
        if pending is not None and options:
            print(
                f"lmms-eval-tasks score: {path} awaits its run's report, which is scored with the run's "
                "settings: scoring with --option here and leaving the run's report alone",
                file=sys.stderr,
            )
            pending = None
        if pending is not None:  # a run whose scoring failed: score as the run would have, write its report
            try:
                metrics, report_path = complete_pending(path, records, pending, validated=True)
            except ValueError as error:
                if isinstance(error, RecordError | JudgingFailed):
                    raise
                print(f"lmms-eval-tasks score: {error}", file=sys.stderr)
                return 2
            print(json.dumps(json_safe(metrics), indent=2, default=str, allow_nan=False))
            print(f"lmms-eval-tasks score: the run's report is complete: {report_path}", file=sys.stderr)
            return 0
        metrics, details = benchmark.score(records, **scoring_options)  # the one path
        bootstrap_options = {key: value for key, value in options.items() if key in OPTION_NAMES}
        metrics, details = attach_intervals(args.benchmark, metrics, details, **bootstrap_options)
        if "uncertainty" in details:
            metrics["uncertainty"] = details.pop("uncertainty")
    except RecordError as error:
        index = error.record_index
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(lines):
            error = RecordError(f"{index} (line {lines[index]})", error.field, error.problem)  # a scorer's
        print(f"lmms-eval-tasks score: {path}: {error}", file=sys.stderr)
        return 1
    except JudgingFailed as error:  # no reply gave a verdict: no metric exists (docs/judges.md)
        print(f"lmms-eval-tasks score: {error}", file=sys.stderr)
        return 3
    except ValueError as error:  # an option value the scorer rejects (scoring.OptionError, one line)
        print(f"lmms-eval-tasks score: {args.benchmark}: {error}", file=sys.stderr)
        return 2
    output = {"metrics": metrics, "details": details, "options": options} if args.details else metrics
    print(json.dumps(json_safe(output), indent=2, default=str, allow_nan=False))
    return 0


def register(subparsers: Any) -> None:
    """Add the `score` subcommand."""
    score = subparsers.add_parser("score", help="re-score saved predictions without running a model")
    score.add_argument("benchmark", help="benchmark name, e.g. hallusionbench or dare")
    score.add_argument("records", help="JSON-lines file, one record per line")
    score.add_argument(
        "--option",
        "-o",
        action="append",
        type=parse_option,
        metavar="KEY=VALUE",
        help="scoring option passed to the benchmark's scorer (repeatable; JSON values allowed; wins over "
        "--options-from)",
    )
    score.add_argument(
        "--options-from",
        metavar="REPORT",
        help="re-score with the options a run used: its pack report <task>_report.json "
        "(provenance.settings.score_options)",
    )
    score.add_argument(
        "--details",
        action="store_true",
        help='print {"metrics", "details", "options"}: the same details the pack report holds',
    )
    score.set_defaults(handler=_command_score)
