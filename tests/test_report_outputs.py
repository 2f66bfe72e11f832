"""What people read: the report's overview and contents, n/a with its reason (report, demo summary), plot
legends / styles / "no data", the VRB radar fallback, and the host patch that keeps cross-task metrics off
the member tasks' rows. Crafted inputs with the expected values worked out by hand in each test."""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.demo import summarise_results, summarise_values
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.host.integration import drop_undefined_group_metrics
from lmms_eval_tasks.human_report import write_report_for_runs
from lmms_eval_tasks.reporting.sections import (
    SectionContext,
    grouped_bars,
    legend_layout,
    lines,
    series_style,
    wrap_label,
)
from lmms_eval_tasks.reporting.undefined import undefined_reason
from lmms_eval_tasks.tasks.tallyqa import scoring as tallyqa_scoring
from lmms_eval_tasks.tasks.vrb import scoring as vrb_scoring
from tests.test_report import crafted_run, md_tables, row

LONG_RUN = "llava_hf (llava-hf-llava-1.5-7b-with-a-very-long-checkpoint-name) / hallusionbench_offline_sample"


# ---- overview and contents ---------------------------------------------------------------------------


def _two_benchmark_run(tmp_path: Path) -> Path:
    """TDIUC micro 70 with an uncertainty record [62.5, 77.5]; TallyQA with simple micro 40 and an
    undefined RMSE (all 4 simple predictions unparsed)."""
    return crafted_run(
        tmp_path / "out", "tdiuc", "tdiuc_x", {"micro_accuracy": 70.0, "micro_accuracy_stderr": 3.8},
        {"uncertainty": {"micro_accuracy": {"estimate": 70.0, "stderr": 3.8, "low": 62.5, "high": 77.5,
                                            "method": "bootstrap", "unit": "question", "n_units": 20}}},
        extra=({"benchmark": "tallyqa", "task": "tallyqa_x",
                "metrics": {"simple_micro_accuracy": 40.0, "simple_rmse": None, "simple_unparsed": 4,
                            "simple_questions": 4},
                "details": {"undefined": tallyqa_scoring.undefined_reasons(
                    {"simple_rmse": math.nan, "simple_unparsed": 4, "simple_questions": 4})}},),
    )  # fmt: skip


def test_report_opens_on_an_overview_with_intervals_and_a_table_of_contents(tmp_path: Path) -> None:
    html_path = write_report_for_runs([_two_benchmark_run(tmp_path)], tmp_path / "report")
    page = html_path.read_text(encoding="utf-8")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    # the overview comes before the contents, and both before the first benchmark section
    assert page.index('<section id="overview">') < page.index('<nav id="contents">')
    assert page.index('<nav id="contents">') < page.index('<section id="tallyqa">')
    # one row per run; a column per benchmark headline (registry's first) with a link to its section
    overview = page[page.index('<section id="overview">') : page.index("</section>")]
    # the interval follows the value for TDIUC only (its report carries one): [62.5, 77.5] at 2 decimals
    assert '<a href="#tdiuc">TDIUC</a><br>micro_<wbr>accuracy<br>[95% interval]</th>' in overview
    assert '<a href="#tallyqa">TallyQA</a><br>simple_<wbr>micro_<wbr>accuracy</th>' in overview
    assert '<td><span class="nw">70.00</span> <span class="nw">[62.50, 77.50]</span></td>' in overview
    assert "<td>40.00</td>" in overview
    # contents: overview, each section (tables and plots counted), provenance; every link has its target
    for anchor in ("overview", "tallyqa", "tdiuc", "provenance"):
        assert f'<li><a href="#{anchor}">' in page and f'id="{anchor}"' in page
    # Markdown twin: same overview values
    overview_md = markdown[markdown.index("## Overview") : markdown.index("## Contents")]
    cells = [line for line in overview_md.splitlines() if line.startswith("| crafted")]
    assert cells == ["| crafted (crafted-model) | 40.00 | 70.00 [62.50, 77.50] |"]


def test_every_table_scrolls_inside_the_page_instead_of_being_cut(tmp_path: Path) -> None:
    """A main-results table with interval columns is wider than a 1200 px window (ConTextual's was cut at
    the right edge): every table sits in a horizontally scrolling box."""
    html_path = write_report_for_runs([_two_benchmark_run(tmp_path)], tmp_path / "report")
    page = html_path.read_text(encoding="utf-8")
    tables = re.findall(r"(.{0,20})<table", page)
    assert tables and all(before.endswith('<div class="scroll">') for before in tables), tables
    assert ".scroll{overflow-x:auto" in page


def test_an_interval_around_another_number_is_not_shown(tmp_path: Path) -> None:
    # the uncertainty record says estimate 100 for a value of 0: its [100, 100] would mislead; the
    # report's own ci95 metrics [0, 0] are shown instead
    output = crafted_run(
        tmp_path / "out", "tdiuc", "tdiuc_x",
        {"micro_accuracy": 0.0, "micro_accuracy_ci95_low": 0.0, "micro_accuracy_ci95_high": 0.0},
        {"uncertainty": {"micro_accuracy": {"estimate": 100.0, "stderr": 0.0, "low": 100.0, "high": 100.0}}},
    )  # fmt: skip
    page = write_report_for_runs([output], tmp_path / "report").read_text(encoding="utf-8")
    overview = page[page.index('<section id="overview">') : page.index("</section>")]
    assert '<td><span class="nw">0.00</span> <span class="nw">[0.00, 0.00]</span></td>' in overview
    assert "100.00" not in overview


def test_undefined_values_read_n_a_with_their_reason_in_the_report(tmp_path: Path) -> None:
    html_path = write_report_for_runs([_two_benchmark_run(tmp_path)], tmp_path / "report")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    main = row(md_tables(markdown)["TallyQA :: Main results, a row per run"], "crafted")
    assert main["simple RMSE"] == "n/a"
    # the section says why, once: 4 of 4 simple predictions unparsed
    assert (
        "Undefined values (n/a): crafted (crafted-model) / tallyqa_x: simple_rmse: "
        "no simple prediction parsed as a number: 4 of 4 unparsed." in markdown
    )


def test_a_run_with_several_tasks_of_a_benchmark_lists_each_in_the_overview(tmp_path: Path) -> None:
    output = crafted_run(
        tmp_path / "out", "hallusionbench", "hallusionbench_a", {"aAcc": 50.0},
        extra=({"benchmark": "hallusionbench", "task": "hallusionbench_offline_a",
                "metrics": {"aAcc": None}},),
    )  # fmt: skip
    page = write_report_for_runs([output], tmp_path / "report").read_text(encoding="utf-8")
    overview = page[page.index('<section id="overview">') : page.index("</section>")]
    # shortest task name first, each named without the benchmark prefix; undefined with its reason (the
    # report has the key, null, and no recorded cause)
    assert (
        '<td class="text">a: 50.00<br>offline_a: n/a (the scorer gave no value for this run and '
        "recorded no reason)</td>" in overview
    )


# ---- undefined reasons -------------------------------------------------------------------------------


def _scored(benchmark: str, records: list[dict]) -> dict:
    """A report as the pipeline writes it: the benchmark's real scorer's metrics and details."""
    metrics, details = get_benchmark(benchmark).score(records)
    return {"metrics": metrics, "details": details}


def _vrb_report(metrics: dict, tables: dict) -> dict:
    """VRB's undefined values as its scorer states them (``vrb.scoring.undefined_reasons``)."""
    return {"metrics": metrics, "details": {"undefined": vrb_scoring.undefined_reasons(metrics, tables)}}


NAN = math.nan


@pytest.mark.parametrize(
    ("benchmark", "metric", "report", "reason"),
    [
        # VRB: clean accuracy 0 -> the drop (clean - corrupted) / clean is 0/0
        ("vrb", "relative_accuracy_drop",
         _vrb_report({"accuracy_clean": 0.0, "relative_accuracy_drop": NAN}, {}),
         "clean accuracy is 0, so a drop relative to it is undefined: 0/0"),
        ("vrb", "first_drop", _vrb_report({"accuracy_clean": NAN, "first_drop": NAN}, {}),
         "no clean level (severity 0) scored in this run"),
        ("vrb", "error_rate",
         _vrb_report({"accuracy_clean": 0.5, "error_rate": NAN}, {"complete_corruptions": []}),
         "needs a complete corruption (clean + severities 1-5); none is complete in this run"),
        # TallyQA's real scorer: two simple questions, neither prediction parses as a number -> RMSE over
        # 0 parsed answers is undefined, "2 of 2 unparsed"
        ("tallyqa", "simple_rmse", _scored("tallyqa", [
            {"question_id": 1, "answer": 2, "issimple": True, "prediction": "two apples"},
            {"question_id": 2, "answer": 5, "issimple": True, "prediction": "many"}]),
         "no simple prediction parsed as a number: 2 of 2 unparsed"),
        # VQDv1's real scorer on its schema example: queries with 1 and 0 target boxes, none with 3
        ("vqdv1", "f1_3", _scored("vqdv1", [dict(r) for r in get_benchmark("vqdv1").record_schema.example]),
         "no question with 3 target box(es) in this run"),
        # the scorer's own reason wins; then the uncertainty engine's for a stderr
        ("tdiuc", "micro_accuracy", {"metrics": {"micro_accuracy": None},
                                     "details": {"undefined": {"micro_accuracy": "no question scored"}}},
         "no question scored"),
        ("tdiuc", "micro_accuracy_stderr", {"metrics": {"micro_accuracy_stderr": None}, "details": {
            "uncertainty": {"micro_accuracy": {"estimate": 50.0, "reason": "a single unit: no spread"}}}},
         "a single unit: no spread"),
    ],
)  # fmt: skip
def test_undefined_reason_shows_the_scorers_cause(
    benchmark: str, metric: str, report: dict, reason: str
) -> None:
    """The scorer states why a value is undefined (details.undefined); the report only displays it."""
    assert undefined_reason(benchmark, metric, report) == reason


def test_an_undefined_value_without_a_recorded_reason_says_so() -> None:
    report = {"metrics": {"simple_rmse": None, "simple_questions": 4, "simple_unparsed": 4}, "details": {}}
    assert undefined_reason("tallyqa", "simple_rmse", report) == (
        "the scorer gave no value for this run and recorded no reason"
    )


def test_a_metric_the_task_does_not_compute_says_so() -> None:
    submission = {"metrics": {"submission_rows": 10}, "details": {"submission_files": {"json": "x.json"}}}
    assert undefined_reason("contextual", "acceptance_rate", submission) == (
        "a leaderboard submission of an unjudged split: predictions only, not scored here"
    )
    assert undefined_reason("tdiuc", "micro_accuracy", {"metrics": {"questions": 3}}) == (
        "this task does not compute it"
    )


def test_demo_summary_prints_n_a_with_the_reason_and_writes_null() -> None:
    # host results as lmms-eval writes them: NaN for the undefined RMSE and relative drop
    results = {
        "results": {
            "tallyqa_sample": {"alias": "tallyqa_sample", "simple_micro_accuracy,none": 0.0,
                               "simple_rmse,none": math.nan, "unparsed,none": 15},
            "vrb_sample": {"accuracy,none": 0.0, "accuracy_clean,none": 0.0,
                           "relative_accuracy_drop,none": math.nan},
        }
    }  # fmt: skip
    reports = {
        "tallyqa_sample": {
            "metrics": {"simple_rmse": None, "simple_questions": 8, "simple_unparsed": 8},
            "details": {
                "undefined": tallyqa_scoring.undefined_reasons(
                    {"simple_rmse": math.nan, "simple_questions": 8, "simple_unparsed": 8}
                )
            },
        },
        "vrb_sample": _vrb_report({"accuracy_clean": 0.0, "relative_accuracy_drop": math.nan}, {}),
    }
    rows = dict(summarise_results(summarise_values(results, ["tallyqa_sample", "vrb_sample"], reports)))
    assert "nan" not in " ".join(rows.values()).lower()
    assert rows["tallyqa_sample"] == (
        "simple_micro_accuracy=0 simple_rmse=n/a (no simple prediction parsed as a number: "
        "8 of 8 unparsed) unparsed=15"
    )
    assert (
        "relative_accuracy_drop=n/a (clean accuracy is 0, so a drop relative to it is undefined: 0/0)"
        in (rows["vrb_sample"])
    )
    values = summarise_values(results, ["vrb_sample"], reports)
    text = json.dumps(values, allow_nan=False)  # raises on a NaN left behind
    assert json.loads(text)["vrb_sample"]["metrics"]["relative_accuracy_drop"] is None


# ---- plots -------------------------------------------------------------------------------------------


def test_fourteen_series_get_fourteen_distinct_styles() -> None:
    styles = {tuple(series_style(index).values()) for index in range(14)}
    assert len(styles) == 14
    # and no two share both colour and line style (the old tab20 pairs did)
    assert len({(style[0], style[1]) for style in styles}) == 14


def test_legend_labels_are_wrapped_never_cut() -> None:
    wrapped = wrap_label(LONG_RUN)
    # every character kept (long words may break across lines; spaces become line ends)
    assert "".join(c for c in wrapped if not c.isspace()) == "".join(c for c in LONG_RUN if not c.isspace())
    assert "..." not in wrapped and wrapped.count("\n") >= 1
    assert max(len(line) for line in wrapped.split("\n")) <= 48
    columns, rows = legend_layout([LONG_RUN, "random_guess (seed=0) / vrb_sample"], 7.2)
    assert columns >= 1 and rows >= 2


def _png_size(plot_png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(plot_png)) as image:
        return image.size


def test_plots_say_when_there_is_nothing_to_see() -> None:
    zeros = grouped_bars("t", "zeros.png", ["a", "b"], {"run 1": [0.0, 0.0], "run 2": [0.0, None]}, "%")
    assert zeros.caption == "Plot: every value is 0 (3 values)."
    empty = lines("t", "empty.png", {"run 1": ([0, 1], [None, None])}, "x", "y")
    assert empty.caption == "Plot: no data (no value is defined)."
    data = grouped_bars("t", "data.png", ["a"], {"run 1": [10.0]}, "%", caption="c")
    assert data.caption == "c"
    # the figure grows below the axes for the legend: 720 wide, taller than 400 with two legend rows
    width, height = _png_size(grouped_bars("t", "l.png", ["a"], {LONG_RUN: [1.0]}, "%").png)
    assert width == 720 and height > 400


def test_vrb_radar_becomes_bars_when_axes_are_zero() -> None:
    from lmms_eval_tasks.framework.registry import get_benchmark
    from lmms_eval_tasks.tasks.vrb.report_section import radar_plot

    context = SectionContext(get_benchmark("vrb"), [])
    # F, R, rho, mu, Delta: only R and mu are non-zero in any run -> 2 axes < 3 -> bars, reason named
    series = {"a": [0.0, 0.5, 0.0, 1.0, 0.0], "b": [0.0, 0.2, 0.0, 0.0, None]}
    plot = radar_plot(context, series, "VRE radar", "r")
    assert "Drawn as bars, not a radar: F, rho, Delta are 0 or undefined for every run" in plot.caption
    assert _png_size(plot.png)[0] == 720
    radar = radar_plot(context, {"a": [0.1, 0.5, 0.3, 1.0, 0.0]}, "VRE radar", "r")
    assert "Drawn as bars" not in radar.caption and _png_size(radar.png)[0] == 600


# ---- host table: cross-task metrics on groups only ---------------------------------------------------


def test_group_only_metrics_leave_member_rows_when_undefined() -> None:
    results = {
        "vrb_sample_clean": {"accuracy,none": 0.3, "accuracy_clean,none": 0.3, "first_drop,none": math.nan,
                             "first_drop_stderr,none": "N/A", "samples": 12},
        "vrb_sample_fog_s1": {"accuracy,none": 0.2, "accuracy_clean,none": math.nan, "vre,none": None},
        "vrb_sample": {"accuracy,none": 0.25, "first_drop,none": math.nan},  # a group keeps everything
        "tallyqa_sample": {"simple_rmse,none": math.nan},  # not a group-only metric: stays (genuine n/a)
    }  # fmt: skip
    removed = drop_undefined_group_metrics(results, {"vrb_sample"})
    assert sorted(removed) == [
        ("vrb_sample_clean", "first_drop"),
        ("vrb_sample_fog_s1", "accuracy_clean"),
        ("vrb_sample_fog_s1", "vre"),
    ]
    # a defined value is never dropped (the clean level's accuracy_clean = 0.3)
    assert results["vrb_sample_clean"] == {"accuracy,none": 0.3, "accuracy_clean,none": 0.3, "samples": 12}
    assert results["vrb_sample_fog_s1"] == {"accuracy,none": 0.2}
    assert math.isnan(results["vrb_sample"]["first_drop,none"])
    assert math.isnan(results["tallyqa_sample"]["simple_rmse,none"])


def test_the_hosts_table_prints_an_undefined_pack_metric_as_n_a() -> None:
    from lmms_eval_tasks.host import patches

    status = patches.apply_patch("table_na")
    assert status.ok, status.detail
    import lmms_eval.utils as host_utils

    results = {
        "results": {
            "tallyqa_sample": {"alias": "tallyqa_sample", "simple_rmse,none": math.nan,
                               "simple_micro_accuracy,none": 12.5},
            "mme": {"alias": "mme", "score,none": math.nan},  # a host task: left as the host prints it
        },
        "n-shot": {"tallyqa_sample": 0, "mme": 0},
        "higher_is_better": {"tallyqa_sample": {}, "mme": {}},
    }  # fmt: skip
    table = host_utils.make_table(results)
    [rmse] = [line for line in table.splitlines() if "simple_rmse" in line]
    [accuracy] = [line for line in table.splitlines() if "simple_micro_accuracy" in line]
    [host_row] = [line for line in table.splitlines() if "|mme" in line]
    assert re.search(r"\|\s*N/A\s*\|", rmse) and "nan" not in rmse.lower()
    assert re.search(r"\|\s*12\.5\s*\|", accuracy)
    assert "nan" in host_row.lower()
    # the results themselves are untouched (the JSON keeps what the host wrote)
    assert math.isnan(results["results"]["tallyqa_sample"]["simple_rmse,none"])


def test_lines_drawn_on_top_of_each_other_are_named() -> None:
    # three corruptions at error 1.0 on every level: one visible line, so the caption names all three
    flat = {name: (range(6), [1.0] * 6) for name in ("brightness", "defocus_blur", "gaussian_noise")}
    plot = lines("t", "flat.png", {**flat, "fog": (range(6), [0.5] * 6)}, "severity", "error", ylim=(0, 1))
    assert plot.caption == (
        "Plot: brightness, defocus_blur, gaussian_noise coincide (drawn on top of each other)."
    )
