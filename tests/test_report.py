"""`lmms-eval-tasks report` and `export`: real harness output folders (every bundled `*_sample` task run
by the launcher with the seeded `random_guess` model) plus crafted reports with hand-computed table values."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
from argparse import Namespace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from lmms_eval_tasks.cli import main as cli_main
from lmms_eval_tasks.demo import sample_tasks
from lmms_eval_tasks.framework.registry import benchmarks
from lmms_eval_tasks.human_report import (
    ReportInputError,
    export_csv,
    export_leaderboard,
    load_runs,
    write_report_for_runs,
)
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.reporting.sections import fmt
from tests.helpers import run_launcher, toy_schema

PLOT_SIZES = {(720, 400), (600, 600)}  # (width, height) before the legend rows below the axes
SUBMISSION_TASK = "contextual_sample_submission"


# ---- helpers -----------------------------------------------------------------------------------------


def md_tables(markdown: str) -> dict[str, list[list[str]]]:
    """Every table of report.md keyed ``"<section> :: <table title>"`` (section = the ``##`` heading up to
    its first space or parenthesis): header row first, then the rows, cells as text."""
    tables: dict[str, list[list[str]]] = {}
    section, title = "", None
    for line in markdown.splitlines():
        if line.startswith("## "):
            section = re.split(r"[ (]", line[3:], maxsplit=1)[0]
        elif line.startswith("### "):
            title = f"{section} :: {line[4:]}"
        elif line.startswith("| ") and title is not None:
            cells = [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            tables.setdefault(title, []).append(cells)
    return tables


def row(table: list[list[str]], label_start: str) -> dict[str, str]:
    """The row whose first cell starts with ``label_start``, keyed by the header."""
    header = table[0]
    for cells in table[1:]:
        if cells[0].startswith(label_start):
            return dict(zip(header, cells, strict=True))
    raise AssertionError(f"no row starting with {label_start!r} in {[cells[0] for cells in table]}")


def html_images(page: str) -> list[tuple[int, int, bytes]]:
    """(width attribute, height attribute, PNG bytes) of every embedded image."""
    found = re.findall(
        r'<img alt="[^"]*" width="(\d+)" height="(\d+)" src="data:image/png;base64,([^"]+)"', page
    )
    return [(int(w), int(h), base64.b64decode(data)) for w, h, data in found]


def assert_png(data: bytes, width: int, height: int) -> None:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        assert image.size == (width, height)
        # the legend sits below the axes: the figure grows by its rows (at most 30 rows of 22 px)
        assert any(image.size[0] == w and h <= image.size[1] <= h + 660 for w, h in PLOT_SIZES), image.size
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 20  # drawn, not a blank canvas


def crafted_run(
    output: Path,
    benchmark: str,
    task: str,
    metrics: dict[str, Any],
    details: dict[str, Any] | None = None,
    *,
    model_args: str = "pretrained=org/crafted-model",
    judge: dict[str, Any] | None = None,
    corruption: dict[str, Any] | None = None,
    limit: int | None = None,
    warnings: tuple[str, ...] = (),
    extra: tuple[dict[str, Any], ...] = (),
    run_id: str = "20261201_000000",
) -> Path:
    """Write crafted reports (schema-checked by ``reports.build_report``) into a run folder of ``output``."""
    args = Namespace(model="crafted", model_args=model_args, limit=limit, seed=None, output_path=str(output))
    folder = output / "crafted-model" / reports.PACK_FOLDER / run_id
    for spec in (
        {"benchmark": benchmark, "task": task, "metrics": metrics, "details": details or {}},
        *extra,
    ):
        report = reports.build_report(
            benchmark=spec["benchmark"],
            task=spec["task"],
            metrics=spec["metrics"],
            details=spec.get("details") or {},
            args=args,
            judge=judge,
            corruption=corruption,
            warnings=warnings,
        )
        report["provenance"]["run_id"] = folder.name
        reports.write_report_files(folder, report, samples=[])
    return output


# ---- real harness output -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sample_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every bundled sample task (and the ConTextual submission sample) run once by the real launcher."""
    output = tmp_path_factory.mktemp("report_runs") / "random_guess"
    tasks = [*sample_tasks(), SUBMISSION_TASK]
    completed = run_launcher(
        "--model", "random_guess", "--model_args", "seed=0", "--tasks", ",".join(tasks),
        "--batch_size", "1", "--output_path", str(output), "--log_samples", "--seed", "0",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    (output.parent / "launcher_stdout.txt").write_text(completed.stdout, encoding="utf-8")
    return output


@pytest.fixture(scope="session")
def sample_report(sample_output: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report_out")
    return write_report_for_runs([sample_output], out)


def _latest_report(output: Path, task: str) -> dict[str, Any]:
    path = reports.task_files(output, task)["report"]
    return reports.read_report(path)


@pytest.mark.slow  # the real launcher's run of every sample task
def test_report_of_every_benchmark_holds_the_runs_numbers_and_valid_plots(
    sample_output: Path, sample_report: Path
) -> None:
    page = sample_report.read_text(encoding="utf-8")
    markdown = (sample_report.parent / "report.md").read_text(encoding="utf-8")
    tables = md_tables(markdown)

    # a section per benchmark that has a sample task, with its title: the papers' benchmarks their own, a new
    # benchmark (new-benchmark's skeleton) the generic one of its headline metrics
    for name, benchmark in benchmarks().items():
        if benchmark.sample_tasks:
            assert f'<section id="{name}"><h2>' in page, name
    papers = ("contextual", "dare", "dvqa", "hallusionbench", "tallyqa", "tdiuc", "vqdv1", "vrb")
    assert all(benchmarks()[name].loaded.report_section for name in papers)

    label = "random_guess (seed=0) / "
    hb = _latest_report(sample_output, "hallusionbench_sample")["metrics"]
    main = row(
        tables["HallusionBench :: Main results (paper layout), a row per run"],
        label + "hallusionbench_sample",
    )
    for key, header in (
        ("aAcc", "aAcc"),
        ("fAcc", "fAcc"),
        ("qAcc", "qAcc"),
        ("LH", "LH"),
        ("fp_ratio", "FP Ratio"),
    ):
        assert main[header] == fmt(hb[key])
    gpt4v = row(
        tables["HallusionBench :: Main results (paper layout), a row per run"],
        "GPT-4V (published, not re-run)",
    )
    assert (gpt4v["aAcc"], gpt4v["qAcc"], gpt4v["fAcc"], gpt4v["Pct Diff"]) == (
        "65.28",
        "28.79",
        "39.88",
        "0.058",
    )
    per_category = tables[f"HallusionBench :: Per category and subcategory: {label}hallusionbench_sample"]
    assert row(per_category, "VD / illusion")["aAcc"] == fmt(hb["VD_illusion_aAcc"])
    assert row(per_category, "VS / chart")["fAcc"] == fmt(hb["VS_chart_fAcc"])

    dare = _latest_report(sample_output, "dare_sample")
    dare_main = row(tables["DARE :: Main results, a row per run"], label + "dare_sample")
    assert dare_main["single acc"] == fmt(dare["metrics"]["single_accuracy"])
    assert dare_main["exact k=2"] == fmt(dare["metrics"]["multi_exact_k2"])
    robustness = tables[f"DARE :: Robustness table (per category): {label}dare_sample"]
    assert row(robustness, "count")["var_drop"] == fmt(dare["details"]["summary_table"]["count"]["var_drop"])
    grid = tables[f"DARE :: Per category x prompt x format: {label}dare_sample"]
    member = _latest_report(sample_output, "dare_sample_single_json_p2")["metrics"]
    assert row(grid, "single_json_p2")["order"] == fmt(member["single_accuracy__order"])
    assert row(grid, "single_json_p2")["all"] == fmt(member["single_accuracy"])

    vrb = _latest_report(sample_output, "vrb_sample")
    vrb_row = row(tables["Visual :: Main results, a row per run"], label)
    assert vrb_row["clean accuracy"] == fmt(vrb["metrics"]["accuracy_clean"])
    assert vrb_row["F (first drop)"] == fmt(vrb["metrics"]["first_drop"])
    per_corruption = tables["Visual :: Per corruption (pooled VRE)"]
    assert row(per_corruption, "brightness")["accuracy_average"] == fmt(
        vrb["details"]["by_corruption"]["brightness"]["accuracy_average"]
    )

    tally = _latest_report(sample_output, "tallyqa_sample")["metrics"]
    tally_row = row(tables["TallyQA :: Main results, a row per run"], label)
    assert tally_row["complex macro"] == fmt(tally["complex_macro_accuracy"])
    assert (
        row(tables["TallyQA :: Main results, a row per run"], "LLaVA-1.5-7B (published")[
            "simple MSE (official)"
        ]
        == "1.20"
    )
    vqd = _latest_report(sample_output, "vqdv1_sample")["metrics"]
    buckets = tables[f"VQDv1 :: Per box-count bucket: {label}vqdv1_sample"]
    assert row(buckets, "4+")["gt boxes"] == fmt(vqd["gt_boxes_4+"])
    tdiuc = _latest_report(sample_output, "tdiuc_sample")["metrics"]
    assert row(tables[f"TDIUC :: Per question type: {label}tdiuc_sample"], "absurd")["accuracy"] == fmt(
        tdiuc["accuracy_absurd"]
    )
    contextual = _latest_report(sample_output, "contextual_sample")
    scenario = row(tables[f"ConTextual :: Per scenario with 95% intervals: {label}contextual_sample"], "time")
    assert scenario["judged"] == fmt(contextual["details"]["per_scenario"]["time"]["judged"])
    submissions = tables["ConTextual :: Leaderboard submissions (unjudged test split)"]
    assert row(submissions, label + SUBMISSION_TASK)["rows"] == "10"

    # provenance: one row per top-level task, rule-judge and sample-data warnings carried over
    provenance = tables["Provenance :: Provenance: random_guess (seed=0)"]
    hb_row = row(provenance, "hallusionbench_sample")
    assert (
        hb_row["judge"] == "rule: rule-based"
        and hb_row["host"] == "0.7.3"
        and hb_row["model args"] == "seed=0"
    )
    assert "GPT-4 judge" in hb_row["warnings"] and "sample data" in hb_row["warnings"]
    for task in ("vqdv1_sample", "vrb_sample", "tdiuc_sample", "dare_sample"):  # every sample says so
        assert "bundled generated sample data" in row(provenance, task)["warnings"], task
    # the warnings come second: the wide table scrolls, and last they were cut at the page's right edge
    assert provenance[0][:2] == ["task", "warnings"]
    # TDIUC's per-type table: question types only (it listed absurd_stderr, color_stderr, ... as types)
    types = [cells[0] for cells in tables[f"TDIUC :: Per question type: {label}tdiuc_sample"][1:]]
    assert types and not any(name.endswith(("_stderr", "_ci_low", "_ci_high")) for name in types), types
    assert row(provenance, "vrb_sample")["corruption profile"] == "vrb (seed 0)"
    assert not any(
        cells[0].startswith("vrb_sample_") or cells[0].startswith("dare_sample_") for cells in provenance
    )

    # plots: embedded PNGs of the declared size, the same bytes as the files next to report.md
    images = html_images(page)
    names = re.findall(r"\]\(plots/([^)]+\.png)\)", markdown)
    assert len(images) == len(names) >= 11
    expected = {
        "hallusionbench_diagnosis.png", "dare_multi_by_k.png", "vrb_radar.png", "vrb_error_brightness.png",
        "tallyqa_accuracy_by_count_simple.png", "vqdv1_precision_recall.png", "contextual_per_scenario.png",
        "dvqa_per_type.png",
    }  # fmt: skip
    assert expected <= set(names)
    for (width, height, data), name in zip(images, names, strict=True):
        assert_png(data, width, height)
        assert (sample_report.parent / "plots" / name).read_bytes() == data
    assert (sample_report.parent / "plots" / "vrb_radar.png").stat().st_size > 0
    # one run, three corruptions: the cells vary, at least 3 axes are non-zero, so a radar (600 wide)
    assert Image.open(sample_report.parent / "plots" / "vrb_radar.png").size[0] == 600
    assert "Drawn as bars" not in markdown

    # self-contained: no script, no external resource
    assert "<script" not in page.lower()
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)


@pytest.mark.slow  # the real launcher's run of every sample task
def test_export_leaderboard_files_and_csv(
    sample_output: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ReportInputError, match="several hallusionbench leaderboard files"):
        export_leaderboard("hallusionbench", sample_output, tmp_path / "hb.json")
    out = export_leaderboard(
        "hallusionbench", sample_output, tmp_path / "hb.json", task="hallusionbench_sample"
    )
    source = reports.task_files(sample_output, "hallusionbench_sample")["report"].parent
    assert out.read_bytes() == (source / "hallusionbench_sample" / "HallusionBench_result.json").read_bytes()
    assert all("model_prediction" in item for item in json.loads(out.read_text(encoding="utf-8")))

    out = export_leaderboard("contextual", sample_output, tmp_path / "ctx.json")
    submission = json.loads(out.read_text(encoding="utf-8"))
    assert list(submission) == ["random_guess"] and len(submission["random_guess"]) == 10
    out_csv = export_leaderboard("contextual", sample_output, tmp_path / "ctx.csv")
    with open(out_csv, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 10 and set(rows[0]) == {"image_url", "instruction", "category", "response"}

    # a relative RUN_DIR names the same files as an absolute one (the reports hold absolute paths)
    monkeypatch.chdir(sample_output.parent)
    relative = ["export", "contextual", sample_output.name, "--out", str(tmp_path / "rel.json")]
    assert cli_main(relative) == 0
    assert (tmp_path / "rel.json").read_bytes() == (tmp_path / "ctx.json").read_bytes()
    monkeypatch.undo()
    # a copy of the run folder (another machine, a renamed folder): its own file, not the original's
    copied = shutil.copytree(sample_output, tmp_path / "copied", ignore=shutil.ignore_patterns("*.png"))
    [mine] = copied.rglob("contextual_sample_submission_predictions.json")
    mine.write_text('{"edited": {}}', encoding="utf-8")
    assert export_leaderboard("contextual", copied, tmp_path / "c.json").read_text() == '{"edited": {}}'

    table = export_csv([sample_output], tmp_path / "all.csv")
    with open(table, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    runs = load_runs([sample_output])
    assert len(rows) == sum(len(report["metrics"]) for run in runs for report in run.reports.values())
    tdiuc = _latest_report(sample_output, "tdiuc_sample")["metrics"]
    [micro] = [r for r in rows if r["task"] == "tdiuc_sample" and r["metric"] == "micro_accuracy"]
    assert float(micro["value"]) == tdiuc["micro_accuracy"] and micro["model"] == "random_guess"

    # CLI: exit codes and messages
    assert cli_main(["export", "csv", str(sample_output), "--out", str(tmp_path / "cli.csv")]) == 0
    assert (tmp_path / "cli.csv").read_text(encoding="utf-8") == table.read_text(encoding="utf-8")
    assert cli_main(["export", "vrb", str(sample_output), "--out", str(tmp_path / "x")]) == 2
    assert cli_main(["export", "hallusionbench", str(tmp_path), "--out", str(tmp_path / "x")]) == 2
    assert cli_main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r")]) == 2


def test_export_of_a_benchmark_without_leaderboard_says_why(tmp_path: Path, capsys: Any) -> None:
    """DARE's test answers are withheld: `export dare` says what to send whom instead of a bare refusal."""
    assert cli_main(["export", "dare", str(tmp_path), "--out", str(tmp_path / "x.json")]) == 2
    said = capsys.readouterr().err
    assert "withheld" in said and "no public leaderboard" in said and "_samples.jsonl" in said
    assert cli_main(["export", "vrb", str(tmp_path), "--out", str(tmp_path / "x.json")]) == 2
    assert "answers are public" in capsys.readouterr().err


# ---- crafted reports, hand-computed values -----------------------------------------------------------


def test_contextual_intervals_and_natural_vs_digital_by_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    per_scenario = {
        "time": {"items": 4, "judged": 4, "accepted": 1, "unjudged": 0},
        "shopping": {"items": 4, "judged": 4, "accepted": 3, "unjudged": 0},
        "navigation": {"items": 2, "judged": 2, "accepted": 0, "unjudged": 0},
        "misc_natural_scenes": {"items": 2, "judged": 2, "accepted": 1, "unjudged": 0},
    }
    crafted_run(
        tmp_path / "out",
        "contextual",
        "contextual",
        {"acceptance_rate": 41.67},
        {"per_scenario": per_scenario},
    )
    from lmms_eval_tasks.reporting import sections
    from lmms_eval_tasks.tasks.contextual import report_section

    drawn: list[dict[str, Any]] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        drawn.append({"groups": args[2], **kwargs})
        return sections.grouped_bars(*args, **kwargs)

    monkeypatch.setattr(report_section, "grouped_bars", spy)
    html_path = write_report_for_runs([tmp_path / "out"], tmp_path / "report")
    tables = md_tables((html_path.parent / "report.md").read_text(encoding="utf-8"))
    table = tables["ConTextual :: Per scenario with 95% intervals: crafted (crafted-model) / contextual"]
    # the plot's error bars are the table's: normal, Wilson where the normal collapses (navigation 0 of 2)
    [plot] = drawn
    bars = dict(zip(plot["groups"], next(iter(plot["errors"].values())), strict=True))
    assert bars["navigation"] == pytest.approx((0.0, 65.76), abs=0.01) and bars["web"] is None
    assert bars["natural"] == pytest.approx((15.35, 84.65), abs=0.01)
    assert plot["groups"][-2:] == ["natural", "digital"] and plot["aggregates"] == 2  # drawn apart
    # natural = shopping + navigation + misc = 4 / 8 = 50%;
    # Wald half-width 1.96 * sqrt(.5 * .5 / 8) = 34.65 points
    normal = ("acceptance %", "95% low (normal, official)", "95% high (normal, official)")
    wilson = ("95% low (Wilson)", "95% high (Wilson)")
    assert [row(table, "natural")[key] for key in normal] == ["50.00", "15.35", "84.65"]
    # Wilson, z = 1.959964, z^2 = 3.841459, n = 8, p = .5: centre (.5 + z^2/16) / (1 + z^2/8) = .5,
    # half = z / (1 + z^2/8) * sqrt(.25/8 + z^2/256) = 1.32442 * .21181 = .28478 -> [21.52, 78.48]
    assert [row(table, "natural")[key] for key in wilson] == ["21.52", "78.48"]
    # digital = time only = 1 / 4 = 25%;
    # half-width 1.959964 * sqrt(.25 * .75 / 4) = 42.434 -> [0 (clipped), 67.43]
    assert [row(table, "digital")[key] for key in normal] == ["25.00", "0.00", "67.43"]
    # navigation: 0 of 2 accepted: the normal interval degenerates to [0, 0] (kept: the official value);
    # Wilson: centre (z^2/4) / (1 + z^2/2) = .96036 / 2.92073 = .32881 = half -> [0.00, 65.76]
    assert [row(table, "navigation")[key] for key in (*normal, *wilson)] == [
        "0.00",
        "0.00",
        "0.00",
        "0.00",
        "65.76",
    ]
    assert row(table, "web")["acceptance %"] == "n/a"  # no judged item: no rate, no interval
    assert "GPT-4V (published, not re-run)" in (html_path.parent / "report.md").read_text(encoding="utf-8")


def test_a_bar_plot_draws_n_a_unlike_0() -> None:
    """An undefined value is written 'n/a', a 0 is a flat line in the series' colour: not the same empty."""
    from lmms_eval_tasks.reporting.sections import grouped_bars

    def colour_pixels(values: list[float | None]) -> int:
        plot = grouped_bars("t", "t.png", ["a", "b", "c"], {"run": values}, "%")
        with Image.open(io.BytesIO(plot.png)) as image:
            found = image.convert("RGB").getcolors(maxcolors=1_000_000) or []
        return sum(count for count, colour in found if colour == (31, 119, 180))  # the first series' blue

    undefined, zero, absent = colour_pixels([None, 50.0, 50.0]), colour_pixels([0.0, 50.0, 50.0]), 0
    assert zero > undefined > absent  # the 0 adds a line the n/a does not


def _vrb_details(levels: dict[str, list[float]]) -> dict[str, Any]:
    return {
        "by_corruption": {name: {"accuracy_by_level": values} for name, values in levels.items()},
        "complete_corruptions": list(levels),
    }


def test_vrb_pool_over_two_runs_by_hand(tmp_path: Path) -> None:
    levels_a = {"fog": [0.8, 0.7, 0.6, 0.5, 0.4, 0.3], "blur": [0.8, 0.8, 0.8, 0.8, 0.8, 0.8]}
    levels_b = {"fog": [0.6, 0.6, 0.5, 0.5, 0.4, 0.4], "blur": [0.6, 0.5, 0.5, 0.5, 0.5, 0.5]}
    crafted_run(
        tmp_path / "a",
        "vrb",
        "vrb",
        {"accuracy_clean": 0.8},
        _vrb_details(levels_a),
        model_args="pretrained=a",
    )
    crafted_run(
        tmp_path / "b", "vrb", "vrb", {"accuracy_clean": 0.6}, _vrb_details(levels_b),
        model_args="pretrained=b", corruption={"profile": "imagenet_c", "seed": 7},
    )  # fmt: skip
    html_path = write_report_for_runs([tmp_path / "a", tmp_path / "b"], tmp_path / "report")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    tables = md_tables(markdown)
    per_model = tables["Visual :: Per model (pooled VRE)"]
    # accuracy_average = mean over the six levels (clean included) per corruption, then over corruptions:
    # a: fog (0.8+0.7+0.6+0.5+0.4+0.3)/6 = 0.55, blur 0.8 -> 0.675
    # b: fog (0.6+0.6+0.5+0.5+0.4+0.4)/6 = 0.5, blur (0.6+5*0.5)/6 = 0.51667 -> 0.50833
    assert row(per_model, "crafted (a)")["accuracy_average"] == "0.675"
    assert row(per_model, "crafted (b)")["accuracy_average"] == "0.508"
    # first drop F = (error_1 - error_0) / error_0; a, fog: (0.3 - 0.2) / 0.2 = 0.5; a, blur: 0 -> mean 0.25
    assert row(per_model, "crafted (a)")["first_drop"] == "0.250"
    per_corruption = tables["Visual :: Per corruption (pooled VRE)"]
    assert row(per_corruption, "fog")["accuracy_average"] == "0.525"  # (0.55 + 0.5) / 2
    assert "ViLT (published, not re-run)" in markdown
    assert "vrb_error_fog.png" in markdown and "vrb_radar.png" in markdown
    assert (
        row(tables["Provenance :: Provenance: crafted (b)"], "vrb")["corruption profile"]
        == "imagenet_c (seed 7)"
    )


def test_provenance_usage_cost_warnings_and_limit(tmp_path: Path) -> None:
    usage = {
        "calls": 3,
        "cache_hits": 1,
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "estimated_cost_usd": 0.01,
    }
    details = {
        "judging": {
            "correctness": {"usage": usage},
            "consistency": {"usage": {**usage, "calls": 2, "estimated_cost_usd": 0.02}},
        }
    }
    crafted_run(
        tmp_path / "out", "hallusionbench", "hallusionbench",
        {"aAcc": 50.0, "unjudged_verdicts": 2, "screened_outputs": 4}, details,
        judge={"kind": "rule", "model": "rule-based", "repeats": 3}, limit=5,
        warnings=("2 unjudged verdicts", "!!! SCORE DEPENDS ON SCREENED OUTPUTS: 4 of 10 outputs"),
    )  # fmt: skip
    html_path = write_report_for_runs([tmp_path / "out"], tmp_path / "report")
    tables = md_tables((html_path.parent / "report.md").read_text(encoding="utf-8"))
    prov = row(tables["Provenance :: Provenance: crafted (crafted-model)"], "hallusionbench")
    # usage summed over both judged passes: 3 + 2 calls, 1 + 1 cached, 200 + 20 tokens, $0.01 + $0.02
    assert prov["judge usage and cost"] == "5 calls, 2 cached, 200+20 tokens, $0.0300"
    assert prov["repeats"] == "3" and prov["unjudged"] == "2" and prov["screened outputs"] == "4"
    assert "2 unjudged verdicts" in prov["warnings"]
    assert "!!! SCORE DEPENDS ON SCREENED OUTPUTS: 4 of 10 outputs" in prov["warnings"]
    assert "--limit 5" in prov["warnings"]
    assert "rule-based judge used where the paper uses a GPT-4 judge" in prov["warnings"]
    # benchmarks missing numbers render what exists: n/a, never a crash
    main = row(
        tables["HallusionBench :: Main results (paper layout), a row per run"],
        "crafted (crafted-model) / hallusionbench",
    )
    assert main["aAcc"] == "50.00" and main["qAcc"] == "n/a"


def test_dare_grid_from_member_reports_and_generic_fallback(tmp_path: Path) -> None:
    members = (
        {"benchmark": "dare", "task": "dare_x_single_gen_p2", "metrics": {
            "single_accuracy": 40.0, "single_accuracy__count": 60.0, "single_accuracy__order": 20.0,
            "unparsed_single_gen_p2": 0}},
        {"benchmark": "dare", "task": "dare_x_multi_json_p1", "metrics": {
            "multi_f1": 33.0, "multi_f1__count": 30.0, "multi_f1__order": 36.0, "unparsed_multi_json_p1": 1}},
        {"benchmark": "unknownbench", "task": "unknownbench_a", "metrics": {"score": 0.5, "label": "x"}},
    )  # fmt: skip
    crafted_run(
        tmp_path / "out", "dare", "dare_x", {"single_accuracy": 40.0, "multi_exact_k1": 12.5},
        {"members": ["dare_x_single_gen_p2", "dare_x_multi_json_p1"]}, extra=members,
    )  # fmt: skip
    html_path = write_report_for_runs([tmp_path / "out"], tmp_path / "report")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    tables = md_tables(markdown)
    grid = tables["DARE :: Per category x prompt x format: crafted (crafted-model) / dare_x"]
    assert row(grid, "single_gen_p2") == {"setup": "single_gen_p2", "metric": "single_accuracy",
                                          "count": "60.00",
                                          "order": "20.00", "all": "40.00"}  # fmt: skip
    assert row(grid, "multi_json_p1")["order"] == "36.00"
    assert row(tables["DARE :: Main results, a row per run"], "Random guessing")["exact k=1"] == "6.25"
    # a benchmark without a registry entry or section: generic table of its numeric metrics
    assert (
        row(tables["unknownbench :: Headline metrics"], "crafted (crafted-model) / unknownbench_a")["score"]
        == "0.500"
    )
    # member reports are not rows of their own anywhere
    assert "/ dare_x_single_gen_p2" not in markdown


# ---- headless Chromium -------------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.slow  # the real launcher's run of every sample task
def test_report_opens_in_headless_chromium_without_console_errors(
    sample_report: Path, tmp_path: Path
) -> None:
    import subprocess

    browser = _chromium()
    if browser is None:
        pytest.skip(
            "chromium not installed (make test installs the Debian package `chromium` when run as root)"
        )
    screenshot = tmp_path / "shot.png"
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    url = sample_report.resolve().as_uri()
    shot = subprocess.run(
        [*common, f"--screenshot={screenshot}", "--window-size=1200,1600",
         "--enable-logging=stderr", "--v=0", url],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert shot.returncode == 0, shot.stderr[-3000:]
    console = [line for line in shot.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    with Image.open(screenshot) as image:
        assert image.size == (1200, 1600)
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50  # text, tables and plots, not a blank page
    dom = subprocess.run(
        [*common, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=False
    )
    assert dom.returncode == 0, dom.stderr[-3000:]
    assert "HallusionBench" in dom.stdout and "<img" in dom.stdout
    assert "Uncaught" not in dom.stderr


@pytest.mark.slow  # the real launcher's run of every sample task
def test_host_table_shows_each_number_once_and_no_nan(sample_output: Path) -> None:
    """The host's printed table of a sample run of every benchmark has no NaN cell: cross-task metrics
    (VRB sub-metrics, DARE std over prompts) sit on the groups only (host patch group_only_metrics)."""
    stdout = (sample_output.parent / "launcher_stdout.txt").read_text(encoding="utf-8")
    table = [line for line in stdout.splitlines() if line.startswith("|") and "|none" in line]
    assert len(table) > 100, stdout[-2000:]
    assert not [line for line in table if re.search(r"\|\s*nan\s*\|", line, re.IGNORECASE)]
    results = json.loads(sorted(sample_output.rglob("*_results.json"))[-1].read_text(encoding="utf-8"))
    every = results["results"]
    # a corruption level lists its accuracy only; the clean level also its (defined) accuracy_clean
    level_keys = {key.split(",")[0] for key in every["vrb_sample_brightness_s1"]}
    group_only = benchmarks()["vrb"].group_metrics
    assert "accuracy" in level_keys and not [k for k in level_keys if k.startswith(group_only)], level_keys
    assert every["vrb_sample_clean"]["accuracy_clean,none"] == every["vrb_sample_clean"]["accuracy,none"]
    # the group carries every sub-metric, equal to the pack report's numbers
    vrb = _latest_report(sample_output, "vrb_sample")["metrics"]
    for metric in ("first_drop", "range_of_error", "error_rate", "average_error", "average_difference",
                   "relative_accuracy_drop", "accuracy_clean"):  # fmt: skip
        assert every["vrb_sample"][f"{metric},none"] == pytest.approx(vrb[metric]), metric
    dare = _latest_report(sample_output, "dare_sample")["metrics"]
    assert every["dare_sample"]["single_accuracy_std_over_prompts,none"] == pytest.approx(
        dare["single_accuracy_std_over_prompts"]
    )
    assert "single_accuracy_std_over_prompts,none" not in every["dare_sample_single_gen_p1"]
    assert "single_accuracy,none" in every["dare_sample_single_gen_p1"]


@pytest.mark.slow  # the real launcher's run of every sample task
def test_group_stderr_in_the_host_results_is_the_pack_bootstrap_of_the_group(sample_output: Path) -> None:
    """A group's Stderr in the host's results is the pack report's bootstrap standard error of the group
    (its records resampled together), not the host's pooled stderr of the member tasks: on the sample run
    DARE's multi_exact_k4 is 100 on prompt 3 and 0 on prompts 1-2 of the same questions, so every resample
    gives the mean 33.33 (pack stderr ~0), while pooling the members' stderrs gave 6.35; VRB's group
    sub-metrics (no member has them) were N/A."""
    results = json.loads(sorted(sample_output.rglob("*_results.json"))[-1].read_text(encoding="utf-8"))
    every = results["results"]
    dare = ("single_accuracy", "single_accuracy_std_over_prompts", "multi_exact_k4", "multi_f1")
    vrb = ("accuracy", "accuracy_clean", "first_drop", "relative_accuracy_drop")
    for group, metrics in (("dare_sample", dare), ("vrb_sample", vrb)):
        report = _latest_report(sample_output, group)["metrics"]
        for metric in metrics:
            expected = report[f"{metric}_stderr"]
            assert isinstance(expected, float), (group, metric, expected)
            assert every[group][f"{metric}_stderr,none"] == pytest.approx(expected), (group, metric)


_OFFSETS_SCRIPT = (
    "<script>window.addEventListener('load',()=>{const o={};"
    "document.querySelectorAll('body>section[id],body>nav[id]').forEach(e=>{"
    "const r=e.getBoundingClientRect();"
    "o[e.id]=[Math.round(r.top+window.scrollY),Math.round(r.height)]});"
    "o._page=[0,document.documentElement.scrollHeight];"
    "document.body.setAttribute('data-offsets',JSON.stringify(o))})</script>"
)


@pytest.mark.slow  # the real launcher's run of every sample task
def test_screenshots_of_every_section_of_the_report(sample_report: Path, tmp_path: Path) -> None:
    """Headless Chromium over the report: a full-page screenshot cut into one PNG per section (overview,
    contents, each benchmark, provenance), each non-blank; kept in $LMMS_EVAL_TASKS_SCREENSHOTS if set."""
    import os
    import subprocess

    browser = _chromium()
    if browser is None:
        pytest.skip(
            "chromium not installed (make test installs the Debian package `chromium` when run as root)"
        )
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
              "--window-size=1200,1600"]  # fmt: skip
    # section positions from a copy of the page with a measuring script (the report itself has none)
    probe = tmp_path / "probe.html"
    probe.write_text(
        sample_report.read_text(encoding="utf-8").replace("</body>", _OFFSETS_SCRIPT + "</body>"),
        encoding="utf-8",
    )
    dom = subprocess.run([*common, "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                         timeout=120, check=False)  # fmt: skip
    found = re.search(r'data-offsets="([^"]+)"', dom.stdout)
    assert found, dom.stderr[-2000:]
    offsets = json.loads(html_unescape(found.group(1)))
    expected = {"overview", "contents", "provenance"} | {
        name for name, benchmark in benchmarks().items() if benchmark.sample_tasks
    }
    assert expected <= set(offsets), sorted(offsets)
    # the page opens on the overview, then the contents
    assert (
        offsets["overview"][0]
        < offsets["contents"][0]
        < min(offsets[name][0] for name in expected - {"overview", "contents"})
    )
    height = offsets["_page"][1]
    full = tmp_path / "full.png"
    shot = subprocess.run([*common[:-1], f"--window-size=1200,{height}", f"--screenshot={full}",
                           sample_report.resolve().as_uri()], capture_output=True, text=True, timeout=180,
                          check=False)  # fmt: skip
    assert shot.returncode == 0, shot.stderr[-3000:]
    keep = Path(os.environ.get("LMMS_EVAL_TASKS_SCREENSHOTS") or tmp_path / "sections")
    keep.mkdir(parents=True, exist_ok=True)
    with Image.open(full) as image:
        page = image.convert("RGB")
    assert page.size == (1200, height)
    for name in sorted(expected):
        top, size = offsets[name]
        crop = page.crop((0, top, 1200, top + size))
        crop.save(keep / f"{name}.png")
        colours = crop.getcolors(maxcolors=1_000_000)
        assert colours is not None and len(colours) > 20, name  # text and tables, not a blank band
        assert size > 100, (name, size)


# Measures, inside the report, every element that reaches past the viewport and sits in no horizontally
# scrolling box that fits it; posts the findings to the page around it (an iframe gives a 390 px viewport:
# headless Chromium's window is at least 500 px wide).
_OVERFLOW_SCRIPT = (
    "<script>window.addEventListener('load',()=>{const W=document.documentElement.clientWidth,bad=[];"
    "const held=e=>{for(let p=e.parentElement;p;p=p.parentElement){const s=getComputedStyle(p).overflowX;"
    "if(s==='auto'||s==='scroll'){const r=p.getBoundingClientRect();return r.left>=-1&&r.right<=W+1}}"
    "return false};document.querySelectorAll('body *').forEach(e=>{const r=e.getBoundingClientRect();"
    "if(r.width&&(r.right>W+1||r.left<-1)&&!held(e))bad.push(e.tagName+' '+Math.round(r.left)+'..'+"
    "Math.round(r.right)+' '+(e.textContent||'').slice(0,40))});parent.postMessage(JSON.stringify("
    "{width:W,page:document.documentElement.scrollWidth,bad:bad.slice(0,20)}),'*')})</script>"
)


@pytest.mark.slow  # the real launcher's run of every sample task
def test_the_report_fits_a_phone_and_a_laptop_screen(sample_report: Path, tmp_path: Path) -> None:
    """At 390 px (a phone) and 1366 px no element is wider than the viewport outside a scroll box (wide
    tables scroll in theirs, first column held), and the page itself never scrolls sideways."""
    import subprocess

    browser = _chromium()
    if browser is None:
        pytest.skip(
            "chromium not installed (make test installs the Debian package `chromium` when run as root)"
        )
    page = tmp_path / "report.html"
    page.write_text(
        sample_report.read_text(encoding="utf-8").replace("</body>", _OVERFLOW_SCRIPT + "</body>"), "utf-8"
    )
    for width in (390, 1366):
        frame = tmp_path / f"frame_{width}.html"
        frame.write_text(
            f'<!DOCTYPE html><html><body style="margin:0"><iframe src="report.html" style="border:0;'
            f'width:{width}px;height:900px"></iframe><script>addEventListener("message",'
            "e=>document.body.setAttribute('data-m',e.data))</script></body></html>",
            encoding="utf-8",
        )
        dom = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--hide-scrollbars", "--allow-file-access-from-files", "--virtual-time-budget=5000",
             f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,900", "--dump-dom",
             frame.as_uri()],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        found = re.search(r'data-m="([^"]+)"', dom.stdout)
        assert found, dom.stderr[-2000:]
        measured = json.loads(html_unescape(found.group(1)))
        assert measured["width"] == width, measured
        assert measured["bad"] == [] and measured["page"] == width, measured


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


def test_a_failing_section_falls_back_to_headline_metrics(tmp_path: Path) -> None:
    from lmms_eval_tasks.framework.registry import Behaviour, Benchmark, register, scorer, unregister

    def broken_section(context: object) -> list:
        raise AttributeError("no_such_function")

    register(
        Benchmark(
            name="brokenbench", title="Broken bench", description="",
            behaviour=Behaviour(score=scorer()(lambda records: ({}, {})), report_section=broken_section),
            record_schema=toy_schema(), headline_metrics=("score",),
        )
    )  # fmt: skip
    try:
        crafted_run(
            tmp_path / "out", "brokenbench", "brokenbench", {"score": 12.5},
            extra=({"benchmark": "tdiuc", "task": "tdiuc", "metrics": {"micro_accuracy": 70.0}},),
        )  # fmt: skip
        html_path = write_report_for_runs([tmp_path / "out"], tmp_path / "report")
    finally:
        unregister("brokenbench")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    tables = md_tables(markdown)
    assert "The brokenbench section could not be rendered (AttributeError" in markdown
    label = "crafted (crafted-model) / "
    assert row(tables["Broken :: Headline metrics"], label + "brokenbench")["score"] == "12.50"
    assert row(tables["TDIUC :: Main results, a row per run"], label + "tdiuc")["micro"] == "70.00"


def test_one_pack_folder_with_two_models_gives_two_runs(tmp_path: Path) -> None:
    crafted_run(tmp_path / "out", "tdiuc", "tdiuc", {"micro_accuracy": 10.0}, model_args="seed=0")
    crafted_run(
        tmp_path / "out",
        "dvqa",
        "dvqa",
        {"micro_accuracy": 20.0},
        model_args="seed=1",
        run_id="20261201_000001",
    )
    runs = load_runs([tmp_path / "out"])
    assert sorted((run.label, sorted(run.reports)) for run in runs) == [
        ("crafted (seed=0)", ["tdiuc"]),
        ("crafted (seed=1)", ["dvqa"]),
    ]
