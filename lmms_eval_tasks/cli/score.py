"""`lmms-eval-tasks score BENCHMARK FILE`: re-score saved predictions without running a model.

When FILE is the records file of a run whose scoring failed (a ``<task>_pending.json`` sits next to it,
e.g. the judge refused every call), the records are scored as that run would have and the run's report is
written into its folder (docs/reports.md, "When judging fails")."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lmms_eval_tasks.cli._arguments import fail, parse_option
from lmms_eval_tasks.reporting.schema import task_files, to_strict_json

PROG = "lmms-eval-tasks score"


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


def records_path(path: Path, task: str | None) -> tuple[Path, str | None]:
    """The records file to score: ``path`` itself, or for a run folder the pack's ``<task>_samples.jsonl`` of
    the latest complete run in it (as ``compare`` reads it); else (path, one-line problem)."""
    from lmms_eval_tasks.framework.comparison import samples_in_folder

    if path.is_dir():
        if not task:
            found = sorted({item.name[: -len("_samples.jsonl")] for item in path.rglob("*_samples.jsonl")})
            some = f" (tasks with records under it: {', '.join(found[:8])})" if found else ""
            return path, f"{path} is a folder: name the task with --task{some}"
        try:
            return samples_in_folder(path, task), None
        except FileNotFoundError as error:
            return path, str(error)
    if not path.is_file():
        return path, f"no such file: {path}"
    return path, None


def records_problem(path: Path, records: list[Any], benchmark: str, rerun: str | None = None) -> str | None:
    """One line when ``records`` cannot be this benchmark's records: an empty file, the host's samples file
    (the pack's file of the same run is named), or records of another benchmark's task (the fix is
    ``rerun`` with ``<owner>`` the owner's name, default ``score <owner> <path>``); else None."""
    from lmms_eval_tasks.framework.registry import benchmark_for_task

    if not records:
        return f"{path} is empty (no records): give the pack's <task>_samples.jsonl of a run"
    first = records[0] if isinstance(records[0], dict) else {}
    if "doc_id" in first and ("resps" in first or "filtered_resps" in first):
        task = path.stem.partition("_samples_")[2]
        pack_file = task_files(path.parent, task).get("samples") if task else None
        where = pack_file or f"{path.parent / 'lmms_eval_tasks'}/<run_id>/{task or '<task>'}_samples.jsonl"
        return (
            f"{path} is the host's samples file (lmms-eval --log_samples); the pack's records are in {where}"
        )
    tasks = sorted({str(item.get("task")) for item in records if isinstance(item, dict) and item.get("task")})
    owners = {task: benchmark_for_task(task) for task in tasks}
    foreign = {task: owner.name for task, owner in owners.items() if owner and owner.name != benchmark}
    if foreign and len(foreign) == len(tasks):
        owner = sorted(set(foreign.values()))[0]
        return (
            f"{path} holds records of task {', '.join(foreign)} (benchmark {owner}), not {benchmark}: run "
            f"`lmms-eval-tasks {(rerun or f'score <owner> {path}').replace('<owner>', owner)}`"
        )
    return None


def _command_score(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.framework.input_checks import RecordError, read_jsonl_numbered
    from lmms_eval_tasks.framework.intervals import OPTION_NAMES, attach_intervals, split_options
    from lmms_eval_tasks.framework.judge_requirement import missing_judge_line
    from lmms_eval_tasks.framework.registry import benchmarks, get_benchmark
    from lmms_eval_tasks.framework.saved_records import pending_for
    from lmms_eval_tasks.framework.task_pipeline import complete_pending
    from lmms_eval_tasks.judges.pipeline import JudgingFailed

    if args.benchmark not in benchmarks():
        known = ", ".join(sorted(benchmarks()))
        return fail(PROG, f"unknown benchmark {args.benchmark!r}; known: {known}")
    path, problem = records_path(Path(args.records), args.task)
    if problem:
        return fail(PROG, problem)
    # Options before records: a bad -o exits 2 whatever the file holds (the bootstrap options, then the
    # scorer's options object: the one check of their names and values).
    benchmark = get_benchmark(args.benchmark)
    options: dict[str, Any] = {}
    if args.options_from:
        try:
            options.update(report_options(Path(args.options_from), args.benchmark))
        except ValueError as error:
            return fail(PROG, error)
    options.update(dict(args.option or []))  # -o wins over the report's options
    try:
        scoring_options = split_options(options)[0]  # bootstrap_resamples / bootstrap_seed
        checked = benchmark.check_options(**scoring_options)
    except ValueError as error:  # scoring.OptionError, one line
        return fail(PROG, f"{args.benchmark}: {error}")
    lines: list[int] = []
    try:
        if path.name.endswith("_report.json"):  # a pretty-printed report, not one record per line
            samples = path.with_name(path.name[: -len("_report.json")] + "_samples.jsonl")
            return fail(PROG, f"{path} is the pack's report of a run; its records are {samples}")
        try:
            records, lines = read_jsonl_numbered(path)
        except OSError as error:  # unreadable file (permissions, I/O)
            return fail(PROG, f"cannot read {path}: {error.strerror or error}")
        problem = records_problem(path, records, args.benchmark)
        if problem:
            return fail(PROG, problem)
        benchmark.validate(records, lines=lines)  # the record contract
        if str(options.get("judge", "")) != "rule":  # -o judge=rule asks for the rule judge by name
            tasks = (str(record.get("task")) for record in records if record.get("task"))
            problem = missing_judge_line(tasks, "lmms-eval-tasks score", records=True)
            if problem:  # before any judging: the rule judge would stand in for the paper's judge silently
                print(problem, file=sys.stderr)
                return 2
        try:
            pending = pending_for(path)
        except ValueError as error:
            return fail(PROG, error)
        if pending is not None and pending.get("benchmark") != args.benchmark:
            owner = pending.get("benchmark")
            run = f"`lmms-eval-tasks score {owner} {path}`"
            return fail(PROG, f"{path} holds {owner} records of task {pending.get('task')}: run {run}")
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
                return fail(PROG, error)
            print(json.dumps(to_strict_json(metrics), indent=2, allow_nan=False))
            print(f"lmms-eval-tasks score: the run's report is complete: {report_path}", file=sys.stderr)
            return 0
        metrics, details = benchmark.score_with(records, checked)  # options checked above, once
        if metrics.get("judge") == "rule" and not any(record.get("task") for record in records):
            # records without a task (a predictions file of the user's own) are the benchmark's judged task:
            # a judge was needed (not every verdict supplied) and the rule judge stood in unasked
            problem = missing_judge_line([args.benchmark], "lmms-eval-tasks score", records=True)
            if problem and str(options.get("judge", "")) != "rule":
                print(problem, file=sys.stderr)
                return 2
        bootstrap_options = {key: value for key, value in options.items() if key in OPTION_NAMES}
        metrics, details = attach_intervals(args.benchmark, metrics, details, **bootstrap_options)
        if "uncertainty" in details:
            metrics["uncertainty"] = details.pop("uncertainty")
    except RecordError as error:
        index = error.record_index
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(lines):
            error = RecordError(f"{index} (line {lines[index]})", error.field, error.problem)  # a scorer's
        return fail(PROG, f"{path}: {error}", 1)
    except JudgingFailed as error:  # no reply gave a verdict: no metric exists (docs/judges.md)
        return fail(PROG, error, 3)
    except ValueError as error:  # an option value the scorer rejects (scoring.OptionError, one line)
        return fail(PROG, f"{args.benchmark}: {error}")
    output = {"metrics": metrics, "details": details, "options": options} if args.details else metrics
    print(json.dumps(to_strict_json(output), indent=2, allow_nan=False))
    return 0


def register(subparsers: Any) -> None:
    """Add the `score` subcommand."""
    score = subparsers.add_parser("score", help="re-score saved predictions without running a model")
    score.add_argument("benchmark", help="benchmark name, e.g. hallusionbench or dare")
    score.add_argument(
        "records",
        help="the pack's <task>_samples.jsonl of a run (one record per line), or a run's output folder with "
        "--task",
    )
    score.add_argument(
        "--task", help="with a folder: the task whose records to score (as `compare` takes it)"
    )
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
