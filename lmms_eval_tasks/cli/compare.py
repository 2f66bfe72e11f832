"""`lmms-eval-tasks compare BENCHMARK RUN_A RUN_B`: are two runs of the same task significantly different?

Re-scores both runs question by question (records files, the pack's ``<task>_samples.jsonl`` files, or run
output folders with ``--task``), pairs them by question id and prints JSON with both accuracies, the
discordant counts ``b01``/``b10`` and McNemar's test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from lmms_eval_tasks.cli._arguments import fail
    from lmms_eval_tasks.cli.score import records_problem
    from lmms_eval_tasks.framework.comparison import TESTS, compare_runs, load_run
    from lmms_eval_tasks.framework.input_checks import OptionError, RecordError
    from lmms_eval_tasks.framework.intervals import paired_difference
    from lmms_eval_tasks.framework.judge_requirement import missing_judge_line
    from lmms_eval_tasks.framework.registry import benchmarks, get_benchmark
    from lmms_eval_tasks.reporting.schema import to_strict_json

    prog = "lmms-eval-tasks compare"
    if args.benchmark not in benchmarks():
        known = ", ".join(sorted(benchmarks()))
        return fail(prog, f"unknown benchmark {args.benchmark!r}; known: {known}")
    options = dict(args.option or [])
    benchmark = get_benchmark(args.benchmark)
    try:
        checked = benchmark.check_options(**options)  # before any record is read
    except ValueError as error:
        return fail(prog, f"{args.benchmark}: {error}")
    try:
        records_a = load_run(args.run_a, args.task)
        records_b = load_run(args.run_b, args.task)
        rerun = f"compare <owner> {args.run_a} {args.run_b}"
        for run, records in ((args.run_a, records_a), (args.run_b, records_b)):
            problem = records_problem(Path(run), records, args.benchmark, rerun)
            if problem:  # another benchmark's records, or the host's samples file: named as `score` does
                return fail(prog, problem)
        if str(options.get("judge", "")) != "rule":  # -o judge=rule asks for the rule judge by name
            tasks = (str(record["task"]) for record in [*records_a, *records_b] if record.get("task"))
            problem = missing_judge_line(tasks, prog, records=True)
            if problem:  # before any judging: the rule judge would stand in for the paper's judge silently
                print(problem, file=sys.stderr)
                return 2
        if benchmark.loaded.per_question is not None:  # McNemar's test (VRB: the paired bootstrap only)
            variant = TESTS[args.test]
            result = compare_runs(
                args.benchmark, records_a, records_b, variant=variant, options=options, checked=checked
            )
        else:
            result = {"benchmark": args.benchmark, "options": dict(options)}
    except FileNotFoundError as error:
        return fail(prog, error)
    except RecordError as error:
        return fail(prog, error, 1)
    except OptionError as error:  # a bad option value (the name was accepted above)
        return fail(prog, f"{args.benchmark}: {error}")
    except ValueError as error:  # different question sets, no per-question correctness
        return fail(prog, error, 1)
    output: dict[str, Any] = {"run_a": str(args.run_a), "run_b": str(args.run_b), **result}
    try:  # the paired bootstrap of the scorer's own resampling (None: the scorer gives none)
        differences = paired_difference(
            args.benchmark,
            records_a,
            records_b,
            metrics=[args.metric] if args.metric else None,
            checked=checked,
            bootstrap_resamples=args.resamples,
            bootstrap_seed=args.seed,
        )
    except (OptionError, ValueError) as error:  # runs whose records differ: refused, one line
        return fail(prog, error, 1)
    if differences is not None and args.metric and args.metric not in differences:
        compared = ", ".join(benchmark.headline_metrics)
        print(
            f"{prog}: {args.benchmark}: no paired comparison of {args.metric!r} (a count, or not one "
            f"of its metrics); --metric takes one of its headline metrics: {compared}",
            file=sys.stderr,
        )
        return 2
    if differences is not None:
        output["paired_bootstrap"] = {name: value.as_dict() for name, value in differences.items()}
    print(json.dumps(to_strict_json(output), indent=2, allow_nan=False))
    return 0


_TESTS_HELP = {
    "auto": "two-sided: exact binomial when b01+b10 < 25, else asymptotic with continuity correction "
    "(default)",
    "exact": "two-sided exact binomial",
    "asymptotic": "two-sided chi-square with continuity correction",
    "uncorrected": "two-sided chi-square without continuity correction",
    "paper": "one-sided toward the better run, without continuity correction (the Revisiting paper's "
    "p-values; assumes the direction the data show, half the uncorrected p)",
}


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand."""
    from lmms_eval_tasks.cli._arguments import parse_option

    parser = subparsers.add_parser(
        "compare",
        help="paired comparison of two runs of the same task (McNemar's test)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("benchmark", help="benchmark name, e.g. tdiuc, tallyqa, dvqa, dare, hallusionbench")
    parser.add_argument("run_a", help="run A: records/samples JSON-lines file, or a run's output folder")
    parser.add_argument("run_b", help="run B: same kind as run A")
    parser.add_argument(
        "--task", help="task name, to find its samples file (latest complete run) when a run is a folder"
    )
    parser.add_argument(
        "--test",
        choices=tuple(_TESTS_HELP),
        default="auto",
        help="McNemar variant; "
        + "; ".join(f"{name} = {text}" for name, text in _TESTS_HELP.items())
        + ". The output's 'sided' says which kind of p-value it is",
    )
    parser.add_argument("--metric", help="compare only this metric (default: every headline metric)")
    parser.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="paired bootstrap seed (default 0)")
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        type=parse_option,
        metavar="KEY=VALUE",
        help="scoring option for both runs, e.g. protocol=official (repeatable; JSON values allowed)",
    )
    parser.set_defaults(handler=_run)
