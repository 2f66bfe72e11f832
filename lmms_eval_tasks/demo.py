"""`make demo`: every bundled `*_sample` task through the launcher with `random_guess` and the tiny LLaVA,
offline with the rule judge (numbers say nothing about quality); unchanged runs reused unless `--fresh`."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmms_eval_tasks.framework.registry import benchmark_for_task, benchmarks


def sample_tasks() -> list[str]:
    """Every benchmark's bundled sample tasks and groups, in registry order (``Benchmark.sample_tasks``)."""
    return [task for benchmark in benchmarks().values() for task in benchmark.sample_tasks]


def summarise_values(
    results: dict[str, Any],
    tasks: Sequence[str],
    reports: dict[str, dict[str, Any]] | None = None,
    max_metrics: int = 8,
) -> dict[str, dict[str, Any]]:
    """{task: {"metrics": {headline metric: value}, "undefined": {metric: reason}}} of a host results JSON
    (an undefined value is None, its reason from the task's pack report in ``reports``)."""
    from lmms_eval_tasks.reporting.undefined import is_undefined, undefined_reason

    summary: dict[str, dict[str, Any]] = {}
    every = results.get("results", {})
    for task in tasks:
        metrics = {key.split(",")[0]: value for key, value in every.get(task, {}).items()}
        benchmark = benchmark_for_task(task)
        wanted = (benchmark.headline_metrics if benchmark is not None else None) or tuple(
            name
            for name, value in metrics.items()
            if "_stderr" not in name and name != "alias" and isinstance(value, int | float)
        )[:max_metrics]
        values: dict[str, Any] = {}
        undefined: dict[str, str] = {}
        report = (reports or {}).get(task)
        for name in [name for name in wanted if name in metrics]:
            value = metrics[name]
            if is_undefined(value):  # None or NaN
                values[name] = None
                undefined[name] = undefined_reason(benchmark.name if benchmark else "", name, report)
            elif isinstance(value, int | float) and not isinstance(value, bool):  # a string is no value
                values[name] = value
        summary[task] = {"metrics": values, "undefined": undefined}
    return summary


def summarise_results(values: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(task, "metric=value ...") rows of ``summarise_values``; an undefined value reads
    ``metric=n/a (reason)``, never ``nan``."""
    rows: list[tuple[str, str]] = []
    for task, summary in values.items():
        shown = []
        for name, value in summary["metrics"].items():
            if value is None:
                shown.append(f"{name}=n/a ({summary['undefined'][name]})")
            elif isinstance(value, float):
                shown.append(f"{name}={value:.4g}")
            else:
                shown.append(f"{name}={value}")
        rows.append((task, " ".join(shown) if shown else "(no metrics)"))
    return rows


def pack_reports(folder: Path) -> dict[str, dict[str, Any]]:
    """{task: pack report} of the newest reports under ``folder`` ({} when there is none to read)."""
    from lmms_eval_tasks.human_report import ReportInputError, load_runs

    try:
        runs = load_runs([folder])
    except ReportInputError:
        return {}
    return {task: report for run in runs for task, report in run.reports.items()}


WHAT_IT_SHOWS = (
    "Demo numbers: a seeded random guesser and an untrained tiny LLaVA (random weights) on a few bundled "
    "generated questions per benchmark, judged tasks scored by the offline rule judge. They show the "
    "pipeline working end to end; they say nothing about any model."
)


def next_steps() -> list[str]:
    """The demo's last lines: what it showed, and the three steps to a real evaluation."""
    from lmms_eval_tasks.documentation import doc

    return [
        "",
        "What this showed: every benchmark's *_sample tasks through the real harness, offline (data, "
        "prompts, generation, parsing, scoring, reports), answered by a seeded random guesser and an "
        "untrained tiny LLaVA (random weights): the numbers measure nothing about model quality.",
        "Next steps for a real evaluation:",
        "  1. real data: the real tasks (hallusionbench, dare, vrb, contextual_test, ...) download their "
        "datasets on a first run with network; TDIUC, TallyQA, DVQA, VQDv1 and ConTextual's images need "
        "`lmms-eval-tasks prepare` (`lmms-eval-tasks tasks` lists every task, `lmms-eval-tasks doctor` "
        "what is cached)",
        "  2. a real model: lmms_eval --model llava_hf --model_args "
        "pretrained=llava-hf/llava-1.5-7b-hf,device_map=cuda:0 --tasks dare --output_path out --log_samples "
        "(any --model of lmms-eval's registry; your own: "
        f"{doc('models.md')})",
        "  3. a judge: hallusionbench and contextual are judged by an LLM: set OPENAI_API_KEY, or "
        "OPENAI_API_URL for a local OpenAI-compatible server (without one they refuse to run; "
        "hallusionbench_offline uses the rule judge)",
    ]


def run_launchers(
    runs: dict[str, list[str]], output: Path, environment: dict[str, str]
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Run `python -m lmms_eval_tasks ARGS` per label side by side (logs in ``output/<label>.log``), sharing
    one import of the host; {label: {"exit_code", "seconds", "cpu_seconds"}} and the import's cost."""
    plan = [
        {"label": label, "argv": arguments, "log": str(output / f"{label}.log")}
        for label, arguments in runs.items()
    ]
    plan_path = output / "demo_runs.json"
    plan_path.write_text(json.dumps(plan, indent=1), encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.host.speedups.shared_import", str(plan_path)],
        capture_output=True,
        env=environment,
        text=True,
        check=False,
    )
    plan_path.unlink(missing_ok=True)
    records = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    finished = {record.pop("label"): record for record in records if "label" in record}
    imported = next((record for record in records if "import_seconds" in record), {})
    if completed.stderr:
        sys.stderr.write(completed.stderr)
    for label in runs:  # a run the server never started (the host's import failed): its log says why
        if label not in finished:
            (output / f"{label}.log").write_text(completed.stderr, encoding="utf-8")
            finished[label] = {"exit_code": completed.returncode or 1, "seconds": 0.0, "cpu_seconds": 0.0}
    return finished, imported


RUN_RECORD = "demo_run.json"  # in each model's folder: the inputs' fingerprint of its finished run
REPORT_RECORD = "demo_report.json"  # in the report folder: the fingerprints of the runs it shows
_VERSIONED = ("lmms_eval", "torch", "transformers", "datasets", "accelerate", "nltk", "numpy", "pillow")


def _hash_tree(digest: Any, folder: Path) -> None:
    """Every file under ``folder`` (relative path and bytes) into ``digest``, in a fixed order."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")


def inputs_fingerprint(
    model_arguments: Sequence[str], tasks: Sequence[str], seed: int, model_dir: Path | None
) -> str:
    """SHA-256 over everything a model's demo run depends on (the pack's files, host and library versions,
    the model's arguments and files, tasks, seed, ``LMMS_*`` settings): equal, a run gives the same files."""
    from importlib import metadata

    from lmms_eval_tasks import TASKS_DIR

    # the pack's and the host's settings (LMMS_*); secrets are left out, the judge is the rule
    settings = sorted(
        (name, value)
        for name, value in os.environ.items()
        if name.startswith("LMMS_")
        and not any(word in name for word in ("KEY", "TOKEN", "SECRET", "PASSWORD"))
    )
    digest = hashlib.sha256()
    digest.update(json.dumps([sys.version, list(model_arguments), list(tasks), seed, settings]).encode())
    for name in _VERSIONED:
        try:
            digest.update(f"{name}=={metadata.version(name)}".encode() + b"\0")
        except metadata.PackageNotFoundError:
            digest.update(f"{name} missing".encode() + b"\0")
    _hash_tree(digest, TASKS_DIR.parent)
    if model_dir is not None and model_dir.is_dir():
        _hash_tree(digest, model_dir)
    return digest.hexdigest()


def finished_run(folder: Path, fingerprint: str) -> Path | None:
    """The results file of the finished run in ``folder`` made from the same inputs, else None."""
    try:
        record = json.loads((folder / RUN_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    results = Path(str(record.get("results_file", "")))
    return results if record.get("fingerprint") == fingerprint and results.is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--output", type=Path, default=Path("out/demo"))
    parser.add_argument("--tiny-llava", type=Path, default=Path(".cache/tiny-llava"))
    parser.add_argument("--tasks", default=None, help="comma-separated tasks (default: every *_sample task)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="run every model again, even when a finished run had the same inputs",
    )
    args = parser.parse_args(argv)

    tasks = args.tasks.split(",") if args.tasks else sample_tasks()
    if not tasks:
        print("demo: no *_sample tasks found", file=sys.stderr)
        return 1
    args.output.mkdir(parents=True, exist_ok=True)
    environment = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LMMS_EVAL_TASKS_JUDGE": "rule",  # offline and deterministic, whatever keys the shell holds
        "TOKENIZERS_PARALLELISM": "false",
        # one thread per process: the tiny model is far faster single-threaded than fighting for 2 cores
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
    }
    models = {
        "random_guess": ["--model", "random_guess", "--model_args", f"seed={args.seed}"],
        "tiny_llava": [
            "--model",
            "llava_hf",
            "--model_args",
            f"pretrained={args.tiny_llava.resolve()},device=cpu,device_map=cpu",
        ],
    }
    summary: dict[str, Any] = {"tasks": tasks, "runs": {}}
    failed = False
    fingerprints: dict[str, str] = {}
    to_run: dict[str, list[str]] = {}
    reused: dict[str, Path] = {}
    for label, model_arguments in models.items():
        folder = args.output / label
        fingerprints[label] = inputs_fingerprint(
            model_arguments, tasks, args.seed, args.tiny_llava.resolve() if label == "tiny_llava" else None
        )
        previous = None if args.fresh else finished_run(folder, fingerprints[label])
        if previous is not None:
            reused[label] = previous
            continue
        (folder / RUN_RECORD).unlink(missing_ok=True)  # a run under way is no finished run
        to_run[label] = [
            *model_arguments,
            "--tasks",
            ",".join(tasks),
            "--batch_size",
            "1",
            "--output_path",
            str(folder),
            "--log_samples",
            "--seed",
            str(args.seed),
        ]
    # the two models' runs are independent: side by side, one process each, one shared import of the host
    finished, imported = run_launchers(to_run, args.output, environment) if to_run else ({}, {})
    if imported:
        summary["host_import"] = imported
    lines = ["| model | task | metrics |", "|---|---|---|"]
    for label in models:
        folder = args.output / label
        run: dict[str, Any] = {"log": str(args.output / f"{label}.log")}
        if label in reused:
            results_file: Path | None = reused[label]
            run.update(exit_code=0, seconds=0.0, reused=True)
        else:
            code = finished[label]["exit_code"]
            run.update(finished[label], reused=False)
            written = sorted(folder.rglob("*_results.json"), key=lambda path: path.stat().st_mtime)
            results_file = written[-1] if code == 0 and written else None  # the newest the host wrote
            if results_file is not None:
                record = {"fingerprint": fingerprints[label], "results_file": str(results_file.resolve())}
                (folder / RUN_RECORD).write_text(json.dumps(record, indent=1), encoding="utf-8")
        if results_file is not None:
            results = json.loads(results_file.read_text(encoding="utf-8"))
            run["results_file"] = str(results_file)
            run["values"] = values = summarise_values(results, tasks, pack_reports(folder))
            lines += [f"| {label} | {task} | {metrics} |" for task, metrics in summarise_results(values)]
        else:
            failed = True
            lines.append(f"| {label} | (failed, exit {run['exit_code']}) | see {run['log']} |")
        summary["runs"][label] = run
    table = "\n".join(lines)
    (args.output / "summary.md").write_text(f"{WHAT_IT_SHOWS}\n\n{table}\n", encoding="utf-8")
    # strict JSON: undefined values are null (with their reason), never a NaN token
    (args.output / "summary.json").write_text(
        json.dumps(summary, indent=2, allow_nan=False), encoding="utf-8"
    )
    print(table)
    for label, run in summary["runs"].items():
        if run["reused"]:
            print(
                f"{label}: reused the finished run with the same inputs (pack files, host and library "
                f"versions, model, tasks, seed): nothing generated or scored again; results: "
                f"{run['results_file']} (--fresh runs it again)"
            )
            continue
        print(
            f"{label}: exit {run['exit_code']} in {run['seconds']} s ({run['cpu_seconds']} s of CPU); "
            f"results: {run.get('results_file', '-')}"
        )
    if imported:
        print(
            f"the host was imported once for the runs: {imported['import_seconds']} s "
            f"({imported['import_cpu_seconds']} s of CPU)"
        )
    print(f"summary written to {args.output / 'summary.md'}; every metric is in the results files, and")
    print(
        f"per-task reports (judge, verdicts, DARE's robustness table) under {args.output}/*/lmms_eval_tasks/"
    )
    if not failed:
        print(f"report (tables, plots, provenance): {write_report(args.output, list(models), fingerprints)}")
    print("\n".join(next_steps()))
    return 1 if failed else 0


def write_report(output: Path, labels: Sequence[str], fingerprints: dict[str, str]) -> str:
    """The demo's report of the runs in ``output``, rewritten only when a run changed since it was written;
    its path, and (when kept) that it was."""
    from lmms_eval_tasks.human_report import write_report_for_runs

    folder = output / "report"
    record_path = folder / REPORT_RECORD
    wanted = {label: fingerprints[label] for label in labels}
    try:
        kept = json.loads(record_path.read_text(encoding="utf-8")) == wanted
    except (OSError, ValueError):
        kept = False
    if kept and (folder / "report.html").is_file() and (folder / "report.md").is_file():
        return f"{folder / 'report.html'} (unchanged: the same runs)"
    record_path.unlink(missing_ok=True)
    report_path = write_report_for_runs([output / label for label in labels], folder, note=WHAT_IT_SHOWS)
    record_path.write_text(json.dumps(wanted, indent=1), encoding="utf-8")
    return str(report_path)


if __name__ == "__main__":
    raise SystemExit(main())
