"""`lmms-eval-tasks report` and `export` (docs/reports.md): one self-contained HTML page and a Markdown twin
over runs, a *run* being one (model, model args) of a folder, its newest report per task."""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework.saved_records import PENDING_SUFFIX
from lmms_eval_tasks.framework.screening import SCREENED_OUTPUTS
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.reporting.sections import Block, Entry, Plot, SectionContext, Table, Text, fmt
from lmms_eval_tasks.reporting.undefined import (
    finite_number,
    is_undefined,
    not_available,
    uncertainty_of,
    undefined_reason,
)

REPORT_HTML = "report.html"
REPORT_MD = "report.md"
PLOTS_FOLDER = "plots"
# Metric names read as "how many records could not be parsed / judged" for the provenance table.
_UNPARSED_KEYS = ("unparsed", "simple_unparsed", "complex_unparsed")
_UNJUDGED_KEYS = ("unjudged_verdicts", "unjudged")


class ReportInputError(ValueError):
    """A folder given to ``report``/``export`` holds no pack report that can be read."""


@dataclass
class Run:
    """The reports of one model folder or run folder, keyed by task, with the host's results if found."""

    label: str
    folder: Path
    reports: dict[str, dict[str, Any]]
    report_paths: dict[str, Path]
    host_results: dict[str, Any] | None = None
    host_results_path: Path | None = None
    errors: list[str] = field(default_factory=list)

    def top_level_tasks(self) -> list[str]:
        """Tasks that are not a member of a group reported in the same run (groups stand for them)."""
        members: set[str] = set()
        for report in self.reports.values():
            listed = report.get("details", {}).get("members")
            if isinstance(listed, list):
                members.update(str(task) for task in listed)
        return [task for task in self.reports if task not in members]


# ---- reading runs ------------------------------------------------------------------------------------


def _pack_folders(path: Path) -> list[Path]:
    """The ``lmms_eval_tasks`` folders (or the one run folder) under whatever folder the user named: every
    pack folder at any depth (the output path's own, each model sub-folder's, nested output paths)."""
    if not path.exists():
        raise ReportInputError(f"{path}: no such folder")
    if path.is_file():
        raise ReportInputError(f"{path}: expected a harness output folder, got a file")
    run_folder = any(path.glob(f"*{reports.REPORT_SUFFIX}")) or any(path.glob(f"*{PENDING_SUFFIX}"))
    if run_folder or path.name == reports.PACK_FOLDER:
        return [path]
    found = sorted(folder for folder in path.rglob(reports.PACK_FOLDER) if folder.is_dir())
    if not found:
        raise ReportInputError(
            f"{path}: no pack reports (no {reports.PACK_FOLDER}/ folder with *_report.json)"
        )
    return found


def _run_folders(pack_folder: Path) -> list[Path]:
    """The run folders of a pack folder, oldest first (a run folder stands for itself)."""
    if pack_folder.name != reports.PACK_FOLDER:
        return [pack_folder]
    return sorted(folder for folder in pack_folder.iterdir() if folder.is_dir())


def _pending_notes(folder: Path) -> list[str]:
    """Why a task of a run folder has no report: its scoring failed, or its scoring or report write was
    interrupted, or the process ended unannounced (records saved, `score` completes it)."""
    notes = []
    for marker in sorted(folder.glob(f"*{PENDING_SUFFIX}")):
        task = marker.name[: -len(PENDING_SUFFIX)]
        if (folder / f"{task}{reports.REPORT_SUFFIX}").is_file():
            continue
        try:
            pending = reports.strict_loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pending = None
        pending = pending if isinstance(pending, dict) else {}
        benchmark = pending.get("benchmark") or "BENCHMARK"
        failure = pending.get("failure")  # "<step> failed: <cause>", noted by the run when a step failed
        # no failure noted: the process ended without saying why (killed); an interrupt or a failure says so
        ended = "the run ended before its report was written"
        why = failure if isinstance(failure, str) and failure else ended
        if pending.get("predict_only") is True and not failure:  # generated here, to be scored elsewhere
            why = "generated with --predict_only, not scored"
        records = folder / f"{task}{reports.SAMPLES_SUFFIX}"
        notes.append(
            f"{folder}: {task}: no report, {why} (records saved); complete it with "
            f"`lmms-eval-tasks score {benchmark} {records}`"
        )
    return notes


def _host_results(pack_folder: Path, run_ids: Iterable[str]) -> tuple[dict[str, Any] | None, Path | None]:
    """The host's results JSON of the newest of ``run_ids`` next to the pack folder, if any."""
    model_folder = (
        pack_folder.parent if pack_folder.name == reports.PACK_FOLDER else pack_folder.parent.parent
    )
    for run_id in sorted(set(run_ids), reverse=True):
        candidate = model_folder / f"{run_id}_results.json"
        if candidate.is_file():
            try:
                return json.loads(candidate.read_text(encoding="utf-8")), candidate
            except (OSError, ValueError) as error:
                logger.warning(f"{candidate}: unreadable host results ({error})")
    return None, None


def _run_label(reports_by_task: dict[str, dict[str, Any]], folder: Path) -> str:
    """``model (model_args)`` from the first report's provenance, else the folder name."""
    for report in reports_by_task.values():
        provenance = report.get("provenance", {})
        model = provenance.get("model")
        if model:
            args = provenance.get("model_args") or ""
            pretrained = re.search(r"(?:pretrained|model)=([^,]+)", args)
            detail = Path(pretrained.group(1)).name if pretrained else args
            return f"{model} ({detail})" if detail else str(model)
    return folder.name


OLDER_RUN_NOTE = "an older run of the same model and model args"
_OLDER_RUNS_SAID: set[tuple[str, int]] = set()


def load_run(pack_folder: Path, skipped: list[str] | None = None) -> list[Run]:
    """Every run of one pack or run folder, one per (model, model args) with each task's newest report;
    what was left out (older, unreadable, failed) is appended to ``skipped`` with the reason."""
    notes: list[str] = [] if skipped is None else skipped
    groups: dict[tuple[str, str], tuple[dict[str, dict[str, Any]], dict[str, Path]]] = {}
    errors: list[str] = []
    for folder in _run_folders(pack_folder):
        notes.extend(_pending_notes(folder))
        for path in sorted(folder.glob(f"*{reports.REPORT_SUFFIX}")):
            task = path.name[: -len(reports.REPORT_SUFFIX)]
            try:
                report = reports.read_report(path)
            except reports.ReportError as error:
                errors.append(str(error))
                notes.append(f"{path}: unreadable, left out ({error})")
                continue
            provenance = report["provenance"]
            key = (str(provenance.get("model")), str(provenance.get("model_args")))
            loaded, kept_paths = groups.setdefault(key, ({}, {}))
            if task in loaded:
                kept = (loaded[task]["provenance"]["timestamp"], kept_paths[task])
                older, newer = sorted([kept, (provenance["timestamp"], path)])
                notes.append(f"{older[1]}: {OLDER_RUN_NOTE}, shown: {newer[1]}")
                if newer[1] != path:
                    continue
            loaded[task] = report
            kept_paths[task] = path
    older_runs = [note for note in notes if f"{OLDER_RUN_NOTE}, shown:" in note]
    for note in notes:
        if note not in older_runs:
            logger.warning(f"report: skipped {note}")
    said = (str(pack_folder), len(older_runs))
    if older_runs and said not in _OLDER_RUNS_SAID:  # one line per folder, not per file (a rerun `make demo`
        _OLDER_RUNS_SAID.add(said)  # printed 204), and once per process however often the folder is read
        logger.warning(
            f"report: {len(older_runs)} report(s) of older runs of the same model and model args under "
            f"{pack_folder} left out: each task shows its newest run"
        )
    runs: list[Run] = []
    for loaded, kept_paths in groups.values():
        loaded, kept_paths = dict(sorted(loaded.items())), dict(sorted(kept_paths.items()))
        run_ids = [
            str(loaded[task]["provenance"].get("run_id") or kept_paths[task].parent.name) for task in loaded
        ]
        host, host_path = _host_results(pack_folder, run_ids)
        runs.append(Run(_run_label(loaded, pack_folder), pack_folder, loaded, kept_paths, host, host_path))
    if runs:
        runs[0].errors = errors
    elif errors:
        logger.warning(f"{pack_folder}: no readable report ({len(errors)} unreadable)")
    return runs


def load_runs(run_dirs: Sequence[str | os.PathLike[str]], skipped: list[str] | None = None) -> list[Run]:
    """Every run under the given folders, in the order given; labels made unique (``#2``, ``#3``...).
    What was left out, and why, is appended to ``skipped``."""
    runs: list[Run] = []
    for run_dir in run_dirs:
        for pack_folder in _pack_folders(Path(run_dir)):
            runs.extend(run for run in load_run(pack_folder, skipped) if run.reports)
    if not runs:
        raise ReportInputError(f"no readable pack report in {', '.join(map(str, run_dirs))}")
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} #{seen[run.label]}"
    return runs


# ---- sections ----------------------------------------------------------------------------------------


@dataclass
class Section:
    """A benchmark's part of the report: its title and blocks."""

    benchmark: str
    title: str
    blocks: list[Block]


def build_sections(runs: Sequence[Run]) -> list[Section]:
    """One section per benchmark present in any run, in registry order (unknown benchmarks last)."""
    from lmms_eval_tasks.framework.registry import benchmarks
    from lmms_eval_tasks.reporting.sections import generic_section

    known = benchmarks()
    entries: dict[str, list[Entry]] = {}
    for run in runs:
        for task in run.top_level_tasks():
            report = run.reports[task]
            members = {
                name: run.reports[name]
                for name in report.get("details", {}).get("members", []) or []
                if name in run.reports
            }
            counts = tuple(getattr(known.get(report["benchmark"]), "count_keys", ()))
            entry = Entry(run.label, task, report, members, counts)
            entries.setdefault(report["benchmark"], []).append(entry)
    order = [name for name in known if name in entries] + sorted(set(entries) - set(known))
    sections: list[Section] = []
    for name in order:
        benchmark = known.get(name) or SimpleNamespace(
            name=name, title=name, headline_metrics=(), loaded=SimpleNamespace(report_section=None)
        )
        context = SectionContext(benchmark=benchmark, entries=entries[name])
        try:
            blocks = list((benchmark.loaded.report_section or generic_section)(context))
        except Exception as error:  # a broken section must not hide the other benchmarks
            logger.exception(f"report section of {name} failed")
            blocks = [
                Text(
                    f"The {name} section could not be rendered ({type(error).__name__}: {error}); "
                    "headline metrics only."
                ),
                *generic_section(context),
            ]
        notes = undefined_notes(context.entries)
        if notes:
            blocks.append(Text(notes))
        sections.append(Section(name, benchmark.title, blocks))
    return sections


def undefined_notes(entries: Sequence[Entry]) -> str:
    """One paragraph naming every undefined (``n/a``) metric of ``entries`` with its reason, so no n/a
    cell of a section is left unexplained."""
    parts: list[str] = []
    for entry in entries:
        by_reason: dict[str, list[str]] = {}
        for metric, value in entry.metrics.items():
            base = metric.removesuffix("_stderr")
            if base != metric and is_undefined(entry.metrics.get(base, 0.0)):
                continue  # the standard error of an undefined value: the value's reason says it all
            if is_undefined(value):
                reason = undefined_reason(entry.report.get("benchmark", ""), metric, entry.report)
                by_reason.setdefault(reason, []).append(metric)
        for reason, metrics in by_reason.items():
            parts.append(f"{entry.label}: {', '.join(metrics)}: {reason}")
    return ("Undefined values (n/a): " + "; ".join(parts) + ".") if parts else ""


# ---- reproduction ------------------------------------------------------------------------------------


def reproduction_verdicts(runs: Sequence[Run], published_as: str | None = None) -> list[tuple[str, Any]]:
    """(run label, ``reproduction.Verdict``) for every top-level task of every run."""
    from lmms_eval_tasks.reproduction import verdict_for_report

    return [
        (run.label, verdict_for_report(run.reports[task], published_as))
        for run in runs
        for task in run.top_level_tasks()
    ]


def _interval_cell(low: float | None, high: float | None) -> str | None:
    return None if low is None or high is None else f"[{fmt(low)}, {fmt(high)}]"


REJUDGE_PATTERN = "{task}_samples.jsonl.rejudge_*.json"


def judge_sensitivity_table(runs: Sequence[Run]) -> Table | None:
    """The ``rejudge`` results saved next to the runs' records (``<task>_samples.jsonl.rejudge_<M>.json``),
    a row per (task, metric); None when there are none."""
    rows, caveats = [], []
    for run in runs:
        for task in run.top_level_tasks():
            folder = run.report_paths[task].parent
            for path in sorted(folder.glob(REJUDGE_PATTERN.format(task=task))):
                try:
                    result = json.loads(path.read_text(encoding="utf-8"))
                    name_a, name_b = result["judge_a"]["name"], result["judge_b"]["name"]
                except (OSError, ValueError, KeyError, TypeError) as error:
                    logger.warning(f"{path}: not a rejudge result ({error}); left out of the report")
                    continue
                if result.get("incomplete"):  # judge calls failed: say it before any number
                    caveats.append(f"{run.label} / {task}: {result['incomplete']}.")
                if result.get("difference_caveat"):
                    caveats.append(f"{run.label} / {task}: {result['difference_caveat']}.")
                if result.get("cohen_kappa_undefined"):
                    caveats.append(f"{run.label} / {task}: Cohen's kappa {result['cohen_kappa_undefined']}.")
                for metric, item in (result.get("difference") or {}).items():
                    rows.append(
                        [
                            f"{run.label} / {task}", name_a, name_b, result.get("judged_by_both"),
                            result.get("agreement"), result.get("cohen_kappa"),
                            len(result.get("flips") or []),
                            metric, item.get(name_a), item.get(name_b), item.get("difference"),
                            _interval_cell(item.get("low"), item.get("high")),
                        ]
                    )  # fmt: skip
    if not rows:
        return None
    return Table(
        "Judge sensitivity (lmms-eval-tasks rejudge)",
        ["run / task", "judge A", "judge B", "items", "agreement", "Cohen's kappa", "flips", "metric",
         "A", "B", "B - A", "B - A 95% CI (paired)"],
        rows,
        "The same records judged by two judges; agreement is the share of items with the same verdict, "
        "flips the items whose verdict changes (listed in the rejudge result file)."
        + "".join(f" {caveat}" for caveat in caveats),
    )  # fmt: skip


def reproduction_section(verdicts: Sequence[tuple[str, Any]], runs: Sequence[Run] = ()) -> Section | None:
    """The "Reproduction" section: each matched report's metrics against their published values, and the
    judge sensitivity of re-judged runs; None when there is neither."""
    from lmms_eval_tasks.reproduction import SAMPLING_RULE

    matched = [(label, verdict) for label, verdict in verdicts if verdict.published_row is not None]
    sensitivity = judge_sensitivity_table(runs)
    if not matched:
        return None if sensitivity is None else Section("reproduction", "Reproduction", [sensitivity])
    rows = []
    for label, verdict in matched:
        for item in verdict.metrics:
            answer = {True: "yes", False: "no", None: f"cannot tell ({item.why or 'no interval'})"}[
                item.within_sampling
            ]
            rows.append(
                [
                    f"{label} / {verdict.task}",
                    verdict.published_row.label,
                    item.metric,
                    item.published,
                    item.value,
                    _interval_cell(item.low, item.high),
                    item.difference,
                    answer,
                ]
            )
    blocks: list[Block] = [
        Text(
            "A run whose model is a published model (matched by its checkpoint, or named with "
            f"--published-as) against the published value. Rule: {SAMPLING_RULE}."
        ),
        Table(
            "Published value against the run",
            "run / task|published model|metric|published|run|run 95% CI|difference (run - published)|"
            "within sampling?".split("|"),
            rows,
        ),
    ]
    for label, verdict in matched:
        source = verdict.published_row.source
        blocks.append(
            Text(
                f"{label} / {verdict.task}: {verdict.summary}. Matched: {verdict.model.how}. "
                f"Published row: {verdict.published_row.label} ({source}). Known reasons for a difference: "
                + ("; ".join(verdict.reasons) if verdict.reasons else "none recorded")
                + "."
            )
        )
    if sensitivity is not None:
        blocks.append(sensitivity)
    return Section("reproduction", "Reproduction", blocks)


# ---- overview ----------------------------------------------------------------------------------------


@dataclass
class OverviewCell:
    """One benchmark's headline of one top-level task of a run: value, interval text, reason if undefined."""

    task: str
    value: Any
    interval: str = ""
    reason: str = ""


@dataclass
class Overview:
    """Models x benchmarks: ``columns`` = (benchmark, title, headline metric); ``rows`` = (run label,
    {benchmark: cells, primary task first}); ``intervals`` = benchmarks with at least one interval."""

    columns: list[tuple[str, str, str]]
    rows: list[tuple[str, dict[str, list[OverviewCell]]]]
    intervals: set[str]


def interval_text(report: dict[str, Any], metric: str) -> str:
    """``[low, high]`` from the report's uncertainty record of ``metric`` (``details.uncertainty``) or
    its ``<metric>_ci95_low/high`` metrics, else ``s.e. x`` from ``<metric>_stderr``, else "" (none)."""
    metrics = report.get("metrics", {})
    block = uncertainty_of(report, metric) or {}
    value, estimate = finite_number(metrics.get(metric)), finite_number(block.get("estimate"))
    if None not in (value, estimate) and not math.isclose(value, estimate, rel_tol=1e-6, abs_tol=1e-9):
        logger.warning(
            f"{report.get('task')}: uncertainty estimate {estimate} of {metric} is not its value {value}; "
            "interval not shown"
        )
        block = {}  # an interval around another number would mislead
    bounds = [finite_number(block.get("low")), finite_number(block.get("high"))]
    if None in bounds:
        bounds = [finite_number(metrics.get(f"{metric}_ci95_{side}")) for side in ("low", "high")]
    if None not in bounds:
        return f"[{fmt(bounds[0])}, {fmt(bounds[1])}]"
    stderr = finite_number(metrics.get(f"{metric}_stderr"))
    return "" if stderr is None else f"s.e. {fmt(stderr)}"


def build_overview(
    runs: Sequence[Run], sections: Sequence[Section], verdicts: Sequence[tuple[str, Any]] = ()
) -> Overview:
    """The first table: a row per run, a column per benchmark's first headline metric (a value per top-level
    task), and a "Reproduction" column when a run matched a published model."""
    from lmms_eval_tasks.framework.registry import benchmarks

    known = benchmarks()
    columns: list[tuple[str, str, str]] = []
    for section in sections:
        benchmark = known.get(section.benchmark)
        headline = list(getattr(benchmark, "headline_metrics", ()) or ())
        if not headline:  # unknown benchmark: its first numeric metric
            for run in runs:
                for report in run.reports.values():
                    if report["benchmark"] == section.benchmark:
                        headline += [
                            key
                            for key, value in report["metrics"].items()
                            if isinstance(value, (int, float)) and not isinstance(value, bool)
                        ]
        if headline:
            columns.append((section.benchmark, section.title.split(" (")[0], headline[0]))
    rows: list[tuple[str, dict[str, list[OverviewCell]]]] = []
    intervals: set[str] = set()
    for run in runs:
        cells: dict[str, list[OverviewCell]] = {}
        tasks = sorted(run.top_level_tasks(), key=lambda task: (len(task), task))  # shortest name first
        for benchmark, _, metric in columns:
            for task in tasks:
                report = run.reports[task]
                if report["benchmark"] != benchmark:
                    continue
                value = report["metrics"].get(metric)
                cell = OverviewCell(task, value, interval_text(report, metric))
                if is_undefined(value):
                    cell.reason = undefined_reason(benchmark, metric, report)
                if cell.interval:
                    intervals.add(benchmark)
                cells.setdefault(benchmark, []).append(cell)
        rows.append((run.label, cells))
    matched = [(label, verdict) for label, verdict in verdicts if verdict.published_row is not None]
    if matched:
        columns.append(("reproduction", "Reproduction", "vs published"))
        for label, cells in rows:
            for run_label, verdict in matched:
                if run_label == label:
                    text = f"{verdict.summary} ({verdict.published_row.label})"
                    cells.setdefault("reproduction", []).append(OverviewCell(verdict.task, text))
    return Overview(columns, rows, intervals)


def _overview_cells(overview: Overview, cells: dict[str, list[OverviewCell]]) -> list[tuple[list[str], bool]]:
    """Per benchmark column: the cell's lines (``value [low, high]``, one line per task, named when there
    are several) and whether it is numeric (right-aligned)."""
    out: list[tuple[list[str], bool]] = []
    for benchmark, _, _ in overview.columns:
        found = cells.get(benchmark, [])
        several = len(found) > 1
        numeric = bool(found) and all(not is_undefined(cell.value) for cell in found)
        texts = []
        for cell in found:
            text = not_available(cell.reason) if is_undefined(cell.value) else fmt(cell.value)
            text = f"{text} {cell.interval}" if cell.interval else text
            short = cell.task.removeprefix(benchmark + "_")  # the benchmark is the column already
            texts.append(f"{short}: {text}" if several else text)
        out.append((texts or ["-"], numeric))
    return out


OVERVIEW_NOTE = (
    "A row per run, a column per benchmark: its headline metric (the first of the benchmark's headline "
    "metrics) for each top-level task or group of the run; a run with several tasks of a benchmark lists "
    "each, named. A 95% interval follows the value when the report carries one (its uncertainty record, "
    "else its ci95 metrics; 's.e.' when only a standard error is known); an uncertainty record whose "
    "estimate is not the reported value is not shown. '-': not run. The benchmark's section holds every "
    "other number."
)


# ---- provenance --------------------------------------------------------------------------------------


def _usage_blocks(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The judge usage dictionaries of a report (details.judge_usage, else each details.judging.*.usage,
    else provenance.judge.usage): calls, tokens and estimated cost."""
    details = report.get("details", {})
    if isinstance(details.get("judge_usage"), dict):
        return [details["judge_usage"]]
    judging = details.get("judging")
    if isinstance(judging, dict):
        if isinstance(judging.get("usage"), dict):
            return [judging["usage"]]
        found = [
            part["usage"]
            for part in judging.values()
            if isinstance(part, dict) and isinstance(part.get("usage"), dict)
        ]
        if found:
            return found
    judge = report.get("provenance", {}).get("judge")
    if isinstance(judge, dict) and isinstance(judge.get("usage"), dict):
        return [judge["usage"]]
    return []


def _sum(blocks: list[dict[str, Any]], key: str) -> float | int | None:
    values = [block.get(key) for block in blocks if isinstance(block.get(key), (int, float))]
    return sum(values) if values else None


def _first_metric(metrics: dict[str, Any], keys: Sequence[str]) -> Any:
    return next((metrics[key] for key in keys if finite_number(metrics.get(key)) is not None), None)


def run_warnings(report: dict[str, Any]) -> list[str]:
    """What a reader must know before trusting a report: its warnings and deviations, plus a rule judge
    standing in for the paper's GPT-4 judge and a ``--limit`` run, said explicitly."""
    provenance = report.get("provenance", {})
    notes = [*report.get("warnings", []), *provenance.get("deviations", [])]
    judge = provenance.get("judge")
    if isinstance(judge, dict) and judge.get("kind") == "rule":
        if not any("rule" in note.lower() and "judge" in note.lower() for note in notes):
            notes.append(
                "rule-based judge used where the paper uses a GPT-4 judge: "
                "not comparable with published numbers"
            )
    limit = provenance.get("limit")
    if limit not in (None, -1) and not any("--limit" in note for note in notes):
        notes.append(f"--limit {limit}: only part of each task's documents were evaluated")
    return list(dict.fromkeys(notes))


def provenance_table(run: Run) -> Table:
    """A row per top-level report of ``run``: warnings first (the wide table scrolls; last, they were cut at
    the page's right edge), then versions, model, judge, usage, corruption, counts."""
    host_version = (run.host_results or {}).get("lmms_eval_version")
    rows = [_provenance_cells(run.reports[task], task, host_version) for task in run.top_level_tasks()]
    note = (
        f"host results: {run.host_results_path}" if run.host_results_path else "host results file not found"
    )
    if run.errors:
        note += "; unreadable reports: " + "; ".join(run.errors)
    columns = list(rows[0]) if rows else []
    return Table(f"Provenance: {run.label}", columns, [list(row.values()) for row in rows], note)


def _provenance_cells(report: dict[str, Any], task: str, host_version: Any) -> dict[str, Any]:
    """One report's provenance row, by column header."""
    provenance = report["provenance"]
    judge = provenance.get("judge") if isinstance(provenance.get("judge"), dict) else None
    usage = _usage_blocks(report)
    corruption = provenance.get("corruption") if isinstance(provenance.get("corruption"), dict) else None
    cost = _sum(usage, "estimated_cost_usd")
    tokens = [_sum(usage, "prompt_tokens"), _sum(usage, "completion_tokens")]
    return {
        "task": task,
        "warnings": "; ".join(run_warnings(report)) or "none",
        "pack": provenance.get("pack_version"),
        "host": provenance.get("host_version") or host_version,
        "model": provenance.get("model"),
        "model args": provenance.get("model_args"),
        "judge": None if judge is None else f"{judge.get('kind')}: {judge.get('model')}",
        "repeats": None if judge is None else judge.get("repeats"),
        "judge usage and cost": None
        if not usage
        else (
            f"{_sum(usage, 'calls') or 0} calls, {_sum(usage, 'cache_hits') or 0} cached, "
            f"{tokens[0] or 0}+{tokens[1] or 0} tokens, ${cost or 0:.4f}"
        ),
        "corruption profile": None
        if corruption is None
        else f"{corruption.get('profile')} (seed {corruption.get('seed')})",
        "unjudged": _first_metric(report["metrics"], _UNJUDGED_KEYS),
        "unparsed": _first_metric(report["metrics"], _UNPARSED_KEYS),
        "screened outputs": _first_metric(report["metrics"], (SCREENED_OUTPUTS,)),
        "run id": provenance.get("run_id"),
    }


# ---- rendering ---------------------------------------------------------------------------------------

CSS_FILE = Path(__file__).resolve().parent / "reporting" / "report.css"  # the page's one style sheet


def _html_table(table: Table) -> str:
    def cell_html(cell: Any) -> str:  # numbers right-aligned, text left
        kind = "" if isinstance(cell, (int, float)) and not isinstance(cell, bool) else ' class="text"'
        return f"<td{kind}>{html.escape(fmt(cell))}</td>"

    head = "".join(f"<th>{html.escape(column)}</th>" for column in table.columns)
    body = ["<tr>" + "".join(map(cell_html, row)) + "</tr>" for row in table.rows]
    note = f'<p class="note">{html.escape(table.note)}</p>' if table.note else ""
    return (
        f"<h3>{html.escape(table.title)}</h3>\n"
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>'
        + "\n".join(body)
        + f"</tbody></table></div>{note}"
    )


def _html_block(block: Block) -> str:
    if isinstance(block, Table):
        return _html_table(block)
    if isinstance(block, Plot):
        data = base64.b64encode(block.png).decode("ascii")
        caption = f'<p class="note">{html.escape(block.caption)}</p>' if block.caption else ""
        return (
            f'<h3>{html.escape(block.title)}</h3>\n<img alt="{html.escape(block.title)}" '
            f'width="{block.width}" height="{block.height}" src="data:image/png;base64,{data}">{caption}'
        )
    return f"<p>{html.escape(block.text)}</p>"


def _md_table(columns: Sequence[Any], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A Markdown table's lines, each cell formatted and its ``|`` and line breaks escaped."""
    escaped = [[fmt(cell).replace("|", "\\|").replace("\n", " ") for cell in row] for row in [columns, *rows]]
    lines = ["| " + " | ".join(row) + " |" for row in escaped]
    return [lines[0], "|" + "---|" * len(columns), *lines[1:]]


def _md_block(block: Block) -> str:
    if isinstance(block, Table):
        lines = [f"### {block.title}", "", *_md_table(block.columns, block.rows)]
        if block.note:
            lines += ["", f"_{block.note}_"]
        return "\n".join(lines)
    if isinstance(block, Plot):
        caption = f"\n\n_{block.caption}_" if block.caption else ""
        return f"### {block.title}\n\n![{block.title}]({PLOTS_FOLDER}/{block.name}){caption}"
    return block.text


def _html_overview_line(line: str) -> str:
    """A value and its interval, each kept on one line (the break may come between them)."""
    value, bracket, interval = line.partition(" [")
    if not bracket or value.startswith("n/a") or ": n/a" in value:
        return html.escape(line)
    return f'<span class="nw">{html.escape(value)}</span> <span class="nw">[{html.escape(interval)}</span>'


def _html_overview(overview: Overview) -> str:
    head = ["<th>run</th>"]
    for benchmark, title, metric in overview.columns:
        link = f'<a href="#{html.escape(benchmark)}">{html.escape(title)}</a>'
        interval = "<br>[95% interval]" if benchmark in overview.intervals else ""
        head.append(f"<th>{link}<br>{html.escape(metric).replace('_', '_<wbr>')}{interval}</th>")
    body = []
    for label, cells in overview.rows:
        tds = [f'<td class="text">{html.escape(label)}</td>']
        for lines, numeric in _overview_cells(overview, cells):
            kind = "" if numeric else ' class="text"'
            tds.append(f"<td{kind}>" + "<br>".join(_html_overview_line(line) for line in lines) + "</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return (
        '<section id="overview"><h2>Overview</h2>\n<div class="scroll"><table class="overview"><thead><tr>'
        + "".join(head)
        + "</tr></thead><tbody>"
        + "\n".join(body)
        + f'</tbody></table></div><p class="note">{html.escape(OVERVIEW_NOTE)}</p></section>'
    )


def _toc_entries(sections: Sequence[Section], provenance: Sequence[Table]) -> list[tuple[str, str, str]]:
    """(anchor, title, what it holds) for the table of contents."""
    entries = [("overview", "Overview", "models x benchmarks, headline metrics")]
    for section in sections:
        tables = sum(isinstance(block, Table) for block in section.blocks)
        plots = sum(isinstance(block, Plot) for block in section.blocks)
        entries.append((section.benchmark, section.title, f"{tables} tables, {plots} plots"))
    entries.append(("provenance", "Provenance", f"{len(provenance)} runs: versions, judges, warnings"))
    return entries


def _html_head(runs: Sequence[Run], note: str, overview: Overview, toc: Sequence[tuple]) -> list[str]:
    """The HTML page up to its first section: inline CSS (no scripts), ``note``, runs, overview, contents."""
    items = "".join(
        f'<li><a href="#{html.escape(anchor)}">{html.escape(title)}</a> '
        f'<span class="note">{html.escape(what)}</span></li>'
        for anchor, title, what in toc
    )
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>lmms-eval-tasks report</title>'
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<style>\n{CSS_FILE.read_text(encoding='utf-8')}</style></head><body>",
        "<h1>lmms-eval-tasks report</h1>",
        *([f"<p><strong>{html.escape(note)}</strong></p>"] if note else []),
        "<p>Runs: " + ", ".join(html.escape(f"{run.label} ({run.folder})") for run in runs) + "</p>",
        _html_overview(overview),
        f'<nav id="contents"><h2>Contents</h2><ol>{items}</ol></nav>',
    ]


def _md_overview(overview: Overview) -> list[str]:
    header = ["run"]
    for benchmark, title, metric in overview.columns:
        interval = " [95% interval]" if benchmark in overview.intervals else ""
        header.append(f"[{title}](#{benchmark}) {metric}{interval}")
    rows = [
        [label, *("<br>".join(lines) for lines, _ in _overview_cells(overview, cells))]
        for label, cells in overview.rows
    ]
    lines = ['<a id="overview"></a>', "", "## Overview", "", *_md_table(header, rows)]
    return [*lines, "", f"_{OVERVIEW_NOTE}_"]


def _md_head(runs: Sequence[Run], note: str, overview: Overview, toc: Sequence[tuple]) -> list[str]:
    """The Markdown twin up to its first section."""
    return [
        "# lmms-eval-tasks report",
        "",
        *([f"**{note}**", ""] if note else []),
        "Runs: " + ", ".join(f"{run.label} (`{run.folder}`)" for run in runs),
        "",
        *_md_overview(overview),
        "",
        "## Contents",
        "",
        *(f"1. [{title}](#{anchor}): {what}" for anchor, title, what in toc),
    ]


def render_page(
    markdown: bool,
    runs: Sequence[Run],
    sections: Sequence[Section],
    provenance: Sequence[Table],
    note: str = "",
    verdicts: Sequence[tuple[str, Any]] = (),
) -> str:
    """The whole report as one HTML document (images as data URIs), or (``markdown``) its Markdown twin
    (plots referenced as ``plots/<name>.png``): one outline, ``note`` first."""
    head = _md_head if markdown else _html_head
    parts = head(runs, note, build_overview(runs, sections, verdicts), _toc_entries(sections, provenance))
    outline = [(section.benchmark, section.title, section.blocks) for section in sections]
    for anchor, title, blocks in [*outline, ("provenance", "Provenance", provenance)]:
        if markdown:
            parts += ["", f'<a id="{anchor}"></a>', "", f"## {title}", *("\n" + _md_block(b) for b in blocks)]
        else:
            parts.append(f'<section id="{html.escape(anchor)}"><h2>{html.escape(title)}</h2>')
            parts += [*map(_html_block, blocks), "</section>"]
    return "\n".join(parts) + ("\n" if markdown else "</body></html>\n")


def write_report(
    runs: Sequence[Run], out_dir: str | os.PathLike[str], note: str = "", published_as: str | None = None
) -> Path:
    """Render ``runs`` into ``out_dir`` (report.html, report.md, plots/*.png); returns report.html's path.
    ``published_as``: the published model every run is compared with (else matched by checkpoint)."""
    out = Path(out_dir)
    (out / PLOTS_FOLDER).mkdir(parents=True, exist_ok=True)
    sections = build_sections(runs)
    verdicts = reproduction_verdicts(runs, published_as)
    reproduction = reproduction_section(verdicts, runs)
    if reproduction is not None:
        sections.append(reproduction)
    provenance = [provenance_table(run) for run in runs]
    for section in sections:
        for block in section.blocks:
            if isinstance(block, Plot):
                (out / PLOTS_FOLDER / block.name).write_bytes(block.png)
    (out / REPORT_MD).write_text(
        render_page(True, runs, sections, provenance, note, verdicts), encoding="utf-8"
    )
    html_path = out / REPORT_HTML
    html_path.write_text(render_page(False, runs, sections, provenance, note, verdicts), encoding="utf-8")
    return html_path


def write_report_for_runs(
    run_dirs: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    skipped: list[str] | None = None,
    note: str = "",
    published_as: str | None = None,
) -> Path:
    """Read every run under ``run_dirs`` and write the report into ``out_dir``; returns report.html's path.
    What was left out, and why, is appended to ``skipped``; ``note`` is shown first."""
    return write_report(load_runs(run_dirs, skipped), out_dir, note, published_as)


def report_json(runs: Sequence[Run], published_as: str | None = None) -> dict[str, Any]:
    """What ``report --json`` prints: per run, its reports' headline metrics and reproduction verdicts."""
    verdicts = reproduction_verdicts(runs, published_as)
    return {
        "runs": [
            {
                "run": run.label,
                "folder": str(run.folder),
                "tasks": {
                    task: {"benchmark": run.reports[task]["benchmark"], "report": str(run.report_paths[task])}
                    for task in run.top_level_tasks()
                },
                "reproduction": [verdict.as_dict() for label, verdict in verdicts if label == run.label],
            }
            for run in runs
        ]
    }


# ---- exports -----------------------------------------------------------------------------------------


EXPORT_CSV_FIELDS = ("run", "model", "model_args", "benchmark", "task", "metric", "value", "run_id", "report")


def export_csv(run_dirs: Sequence[str | os.PathLike[str]], out_file: str | os.PathLike[str]) -> Path:
    """Write every metric of every report under ``run_dirs`` as CSV (a row per run, task and metric; None
    as an empty cell)."""
    import csv

    runs = load_runs(run_dirs)
    out = Path(out_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(EXPORT_CSV_FIELDS)
        for run in runs:
            for task, report in run.reports.items():
                model, model_args, run_id = map(report["provenance"].get, ("model", "model_args", "run_id"))
                path = run.report_paths[task]
                for metric, value in report["metrics"].items():
                    writer.writerow(
                        [run.label, model, model_args, report["benchmark"], task, metric, value, run_id, path]
                    )
    return out


def leaderboard_benchmarks() -> list[str]:
    """The benchmarks whose tasks write leaderboard files (``Benchmark.leaderboard_files``)."""
    from lmms_eval_tasks.framework.registry import benchmarks

    return [name for name, benchmark in benchmarks().items() if benchmark.leaderboard_files]


def _leaderboard_source(
    run_dir: str | os.PathLike[str], benchmark: str, task: str | None, patterns: Sequence[str]
) -> list[Path]:
    """The leaderboard files a benchmark's tasks wrote under ``run_dir`` (newest run first): the registry
    entry's ``leaderboard_files`` (``patterns``) and the report's ``details.submission_files``."""
    found: list[Path] = []
    for run in load_runs([run_dir]):
        for name, report in run.reports.items():
            if report["benchmark"] != benchmark or (task is not None and name != task):
                continue
            folder = run.report_paths[name].parent
            files = report.get("details", {}).get("submission_files") or {}
            candidates = [folder / pattern.format(task=name) for pattern in patterns]
            # the report's paths are where the run wrote them: read the files beside the report (a copied
            # or moved folder, a relative RUN_DIR), never those of the folder the run was copied from
            candidates += [folder / Path(path).name for path in files.values() if isinstance(path, str)]
            found.extend(path.resolve() for path in candidates if path.is_file())
    return list(dict.fromkeys(found))


def export_leaderboard(
    benchmark: str, run_dir: str | os.PathLike[str], out_file: str | os.PathLike[str], task: str | None = None
) -> Path:
    """Copy the leaderboard file a benchmark's task wrote (``Benchmark.leaderboard_files``) to ``out_file``;
    of several formats, the one of ``out_file``'s extension (else ``.json``)."""
    import shutil

    from lmms_eval_tasks.framework.registry import benchmarks

    out = Path(out_file)
    patterns = getattr(benchmarks().get(benchmark), "leaderboard_files", ())
    sources = _leaderboard_source(run_dir, benchmark, task, patterns)
    formats = {Path(pattern).suffix for pattern in patterns}
    if len(formats) > 1:
        wanted = out.suffix.lower() if out.suffix.lower() in formats else ".json"
        sources = [path for path in sources if path.suffix == wanted]
    if not sources:
        names = [Path(pattern.format(task="<task>")).name for pattern in patterns]
        what = "/".join(names) or "leaderboard file"
        raise ReportInputError(
            f"{run_dir}: no {what} of {benchmark}"
            + (f" task {task}" if task else "")
            + " found (was the task run with --output_path?)"
        )
    if len(sources) > 1:
        listing = ", ".join(str(path) for path in sources)
        raise ReportInputError(
            f"{run_dir}: several {benchmark} leaderboard files ({listing}); name one with --task, or give "
            "the run folder (lmms_eval_tasks/<run_id>) that holds it"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sources[0], out)
    return out
