"""`lmms-eval-tasks rejudge BENCHMARK RUN --judge-model M`: how much the judge moves a judged number.

RUN is a run folder (with --task) or a pack records file (``<task>_samples.jsonl``). Its records are judged
again by the run's judge (A) and by M (B), with the run's scoring options, through the judge cache; prints and
writes ``<records>.rejudge_<M>.json``: agreement, Cohen's kappa, flips, each headline metric under both
judges and the paired 95% interval of B - A (comparing-with-papers.md in the pack's documentation).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any

from lmms_eval_tasks.cli._arguments import fail as fail_line
from lmms_eval_tasks.cli._arguments import parse_option
from lmms_eval_tasks.reporting.schema import SAMPLES_SUFFIX, to_strict_json

_JUDGE_KEYS = ("judge", "judge_model", "repeats")


def _run_options(records_file: Path, benchmark: str, args: argparse.Namespace) -> tuple[dict, dict] | str:
    """(judge A's options: the run's judge or --baseline-judge-model, the run's other scoring options for
    both judges) from the report next to the records; else a one-line problem."""
    from lmms_eval_tasks.cli.score import report_options

    model = args.baseline_judge_model
    named = {"judge": "openai", "judge_model": model} if model else None
    task = records_file.name.removesuffix("_samples.jsonl")
    report_path = records_file.with_name(f"{task}_report.json")
    try:
        options = report_options(report_path, benchmark)
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as error:
        if named:
            return named, {}
        if report_path.is_file():
            return str(error)
        return f"no report next to {records_file} to read the run's judge from: give --baseline-judge-model"
    shared = {key: value for key, value in options.items() if key not in _JUDGE_KEYS}
    if named:
        return named, shared
    recorded = (report.get("provenance") or {}).get("judge")
    recorded = recorded if isinstance(recorded, dict) else {}
    if recorded.get("kind") == "rule":
        judge: dict[str, Any] = {"judge": "rule"}
    elif recorded.get("kind") == "openai" and recorded.get("model"):
        judge = {"judge": "openai", "judge_model": str(recorded["model"])}
    else:
        judge = {key: options[key] for key in ("judge", "judge_model") if options.get(key) is not None}
    if not judge:
        return f"{report_path} records no judge for the run: give --baseline-judge-model"
    repeats = recorded.get("repeats")
    repeats = options.get("repeats") if repeats is None else repeats
    if isinstance(repeats, int) and not isinstance(repeats, bool):
        judge["repeats"] = repeats
    return judge, shared


def _only_task(folder: Path, benchmark: str) -> str | None:
    """The one task of ``benchmark`` with records under ``folder``, taken without --task; None when there
    are none or several (then ``records_path`` names them)."""
    from lmms_eval_tasks.framework.registry import benchmark_for_task

    if not folder.is_dir():
        return None
    tasks = {item.name[: -len(SAMPLES_SUFFIX)] for item in folder.rglob(f"*{SAMPLES_SUFFIX}")}
    owned = [task for task in tasks if (owner := benchmark_for_task(task)) and owner.name == benchmark]
    return owned[0] if len(owned) == 1 else None


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.cli.score import records_path, records_problem
    from lmms_eval_tasks.framework.input_checks import RecordError, read_jsonl_numbered
    from lmms_eval_tasks.framework.intervals import split_options
    from lmms_eval_tasks.framework.registry import benchmarks, get_benchmark
    from lmms_eval_tasks.judges.pipeline import JudgingFailed
    from lmms_eval_tasks.rejudge import JudgeSetting, rejudge, rejudge_module

    fail = functools.partial(fail_line, "lmms-eval-tasks rejudge")

    if args.benchmark not in benchmarks():
        return fail(f"unknown benchmark {args.benchmark!r}; known: {', '.join(sorted(benchmarks()))}")
    try:
        rejudge_module(args.benchmark)
    except ValueError as error:
        return fail(str(error))
    path, problem = records_path(Path(args.run), args.task or _only_task(Path(args.run), args.benchmark))
    if problem:
        return fail(problem)
    found = _run_options(path, args.benchmark, args)
    if isinstance(found, str):
        return fail(found)
    baseline, run_options = found
    given = split_options(dict(args.option or []))[0]
    for key in ("judge", "judge_model"):
        given.pop(key, None)
    # The run's scoring options and judge repeats for both judges; -o wins for both.
    run_options = split_options(run_options)[0]  # the scorer's own; bootstrap options are rejudge's flags
    shared = {**run_options, **({"repeats": baseline["repeats"]} if "repeats" in baseline else {}), **given}
    options_a = {**baseline, **shared}
    options_b = {**shared, "judge": "openai", "judge_model": args.judge_model}
    benchmark = get_benchmark(args.benchmark)
    try:
        checked = [benchmark.check_options(**options) for options in (options_a, options_b)]
        records, lines = read_jsonl_numbered(path)
        problem = records_problem(path, records, args.benchmark)
        if problem:
            return fail(problem)
        benchmark.validate(records, lines=lines)
        result = rejudge(
            args.benchmark,
            records,
            JudgeSetting(options_a, args.baseline_base_url, checked[0]),
            JudgeSetting(options_b, args.judge_base_url, checked[1]),
            resamples=args.resamples,
            seed=args.seed,
        )
    except (RecordError, ValueError, JudgingFailed, OSError) as error:
        return fail(str(error).splitlines()[-1] if str(error) else type(error).__name__)
    result = to_strict_json({"records": str(path), **result})
    text = json.dumps(result, indent=2)
    safe_model = re.sub(r"[^A-Za-z0-9._-]", "_", args.judge_model)  # Qwen/Qwen2.5 -> Qwen_Qwen2.5: no folder
    out = Path(args.out) if args.out else path.with_name(f"{path.name}.rejudge_{safe_model}.json")
    print(text)
    try:
        out.write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        return fail(f"cannot write the result to {out}: {error.strerror or error}; give --out FILE")
    if result.get("incomplete"):  # a failed judge call never passes silently; the file says so too
        print(f"lmms-eval-tasks rejudge: {out}: {result['incomplete']}", file=sys.stderr)
        return 1
    return 0


def register(subparsers: Any) -> None:
    """Add the ``rejudge`` subcommand."""
    parser = subparsers.add_parser(
        "rejudge",
        help="judge a run's saved records with another judge: agreement, kappa, flips, metric difference",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("benchmark", help="hallusionbench or contextual")
    parser.add_argument("run", metavar="RUN", help="run folder (with --task) or a <task>_samples.jsonl")
    parser.add_argument("--task", default=None, help="the task whose records to read from a run folder")
    parser.add_argument("--judge-model", required=True, help="judge B: the model to compare with")
    parser.add_argument("--judge-base-url", default=None, help="judge B's endpoint (default: configured)")
    parser.add_argument(
        "--baseline-judge-model", default=None, help="judge A (default: the run's judge, from its report)"
    )
    parser.add_argument("--baseline-base-url", default=None, help="judge A's endpoint (default: configured)")
    parser.add_argument(
        "--option", "-o", action="append", type=parse_option, metavar="KEY=VALUE",
        help="scorer option for both judges (e.g. repeats=1)",
    )  # fmt: skip
    parser.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="paired bootstrap seed")
    parser.add_argument("--out", default=None, help="result file (default: next to the records)")
    parser.set_defaults(handler=_run)
