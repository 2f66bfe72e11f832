"""The report's 95% intervals: CI columns next to every metric a run has an interval for, significance marks
against the best run (the unpaired difference test, worked out by hand), error bars on the plots, and a
headless Chromium screenshot of the page."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.human_report import write_report_for_runs
from lmms_eval_tasks.reporting.sections import NOT_SIGNIFICANT, significance_marks
from tests.test_report import crafted_run, html_images, md_tables, row


def _block(estimate: float, stderr: float, low: float, high: float) -> dict:
    return {"estimate": estimate, "stderr": stderr, "low": low, "high": high, "method": "bootstrap",
            "unit": "question", "n_units": 400, "n_resamples": 1000, "seed": 0,
            "confidence": 0.95}  # fmt: skip


def test_significance_marks_by_hand() -> None:
    # best 60 (se 2). 57 (se 1.5): |3| < 1.96 * sqrt(4 + 2.25) = 4.90 -> not significant.
    # 50 (se 1): |10| > 1.96 * sqrt(4 + 1) = 4.38 -> significant, no mark. No stderr -> no mark.
    marks = significance_marks([57.0, 60.0, 50.0, 58.0], [1.5, 2.0, 1.0, None])
    assert marks == [NOT_SIGNIFICANT, "best", "", ""]
    # lower is better: best is 50; 57 vs 50: |7| < 1.96 * sqrt(2.25 + 1) = 3.53? no: 7 > 3.53 -> significant
    assert significance_marks([57.0, 60.0, 50.0], [1.5, 2.0, 1.0], lower_is_better=True) == ["", "", "best"]
    # the edge: difference 1.96 * sqrt(2) * 1 = 2.772 is significant from just above it
    edge = 1.959963984540054 * math.sqrt(2)
    assert significance_marks([10.0, 10.0 - edge * 0.999], [1.0, 1.0]) == ["best", NOT_SIGNIFICANT]
    assert significance_marks([10.0, 10.0 - edge * 1.001], [1.0, 1.0]) == ["best", ""]
    assert significance_marks([10.0], [1.0]) == [""]  # one run: nothing to compare


def test_best_only_among_parsed_runs_never_on_a_tie_nor_for_samples_against_published() -> None:
    """'best' needs a single best among runs whose answers parsed; sample runs (bundled generated data) are
    never ranked above published rows (a caveat says why); counts get no interval column."""
    from lmms_eval_tasks.reporting.published import PublishedRow
    from lmms_eval_tasks.reporting.sections import SAMPLE_CAVEAT, Entry, metrics_table

    def entry(run: str, task: str, f1: float, unparsed: int, records: int = 19) -> Entry:
        blocks = {key: _block(value, 2.0, value - 4, value + 4) for key, value in
                  (("micro_f1", f1), ("unparsed", float(unparsed)))}  # fmt: skip
        report = {"benchmark": "vqdv1", "metrics": {"micro_f1": f1, "unparsed": unparsed},
                  "details": {"records": records, "uncertainty": blocks}}  # fmt: skip
        return Entry(run, task, report)

    columns = [("micro_f1", "micro F1"), ("unparsed", "unparsed")]
    parsed, silent = entry("a", "vqdv1", 20.0, 0), entry("b", "vqdv1", 31.58, 19)  # b: 19 of 19 unparsed
    table = metrics_table("t", [parsed, silent], columns)
    assert table.columns == ["run / task", "micro F1", "micro F1 95% CI", "unparsed"]  # no count interval
    assert [cells[2] for cells in table.rows] == ["[16.00, 24.00]", "[27.58, 35.58]"]  # b is no 'best'
    tie = metrics_table("t", [entry("a", "vqdv1", 0.0, 5), entry("b", "vqdv1", 0.0, 5)], columns)
    assert [cells[2] for cells in tie.rows] == ["[-4.00, 4.00]", "[-4.00, 4.00]"]  # a 0.00 tie: no best
    published = [PublishedRow("GPT-4o", {"micro_f1": 25.33}, "the paper")]
    samples = [entry("a", "vqdv1_sample", 31.58, 0), entry("b", "vqdv1_sample", 10.0, 0)]
    table = metrics_table("t", samples, columns, published)
    assert [cells[2] for cells in table.rows[:2]] == ["[27.58, 35.58]", "[6.00, 14.00]"]
    assert SAMPLE_CAVEAT in table.note
    assert "best" in metrics_table("t", samples, columns).rows[0][2]  # two sample runs: ranked


def _three_runs(tmp_path: Path) -> list[Path]:
    runs = []
    for name, micro, stderr, low, high in (
        ("model-a", 60.0, 2.0, 56.1, 63.9),
        ("model-b", 57.0, 1.5, 54.0, 60.0),
        ("model-c", 50.0, 1.0, 48.0, 52.0),
    ):
        runs.append(
            crafted_run(
                tmp_path / name,
                "tdiuc",
                "tdiuc",
                {"micro_accuracy": micro, "micro_accuracy_stderr": stderr, "macro_accuracy": micro - 5},
                {"uncertainty": {"micro_accuracy": _block(micro, stderr, low, high)}},
                model_args=f"pretrained=org/{name}",
            )
        )
    return runs


def test_main_table_has_interval_columns_and_marks(tmp_path: Path) -> None:
    html_path = write_report_for_runs(_three_runs(tmp_path), tmp_path / "report")
    markdown = (html_path.parent / "report.md").read_text(encoding="utf-8")
    tables = md_tables(markdown)
    title = next(key for key in tables if key.startswith("TDIUC :: Main results"))
    table = tables[title]
    assert "micro 95% CI" in table[0]
    assert table[0].index("micro 95% CI") == table[0].index("micro") + 1
    assert "macro (arithmetic MPT) 95% CI" not in table[0]  # no run has an interval for macro
    a, b, c = (row(table, label) for label in ("crafted (model-a)", "crafted (model-b)", "crafted (model-c)"))
    assert a["micro 95% CI"] == "[56.10, 63.90] best"
    assert b["micro 95% CI"] == f"[54.00, 60.00] {NOT_SIGNIFICANT}"  # |3| < 4.90
    assert c["micro 95% CI"] == "[48.00, 52.00]"  # |10| > 4.38: significantly below the best
    assert row(table, "LLaVA-1.5-7B")["micro 95% CI"] == "n/a"  # the published row has no interval
    assert "sqrt(se_a^2 + se_b^2)" in markdown and "not overlapping intervals" in markdown


def test_error_bars_on_plots_and_chromium_screenshot(tmp_path: Path) -> None:
    runs = []
    for name, shares in (("model-a", (40.0, 50.0, 10.0)), ("model-b", (30.0, 60.0, 10.0))):
        metrics = dict(zip(("LH", "VI", "Mixed"), shares, strict=True))
        block = {key: _block(value, 3.0, value - 6.0, value + 6.0) for key, value in metrics.items()}
        runs.append(
            crafted_run(
                tmp_path / name,
                "hallusionbench",
                "hallusionbench",
                {"aAcc": 60.0, "fAcc": 30.0, "qAcc": 35.0, "overall": 41.67, **metrics},
                {"uncertainty": block},
                model_args=f"pretrained=org/{name}",
            )
        )
    html_path = write_report_for_runs(runs, tmp_path / "report")
    page = html_path.read_text(encoding="utf-8")
    assert html_images(page)  # the diagnosis bar chart, with its error bars drawn by grouped_bars
    tables = md_tables((html_path.parent / "report.md").read_text(encoding="utf-8"))
    assert any("LH 95% CI" in table[0] or "VI 95% CI" in table[0] for table in tables.values())
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium not installed")
    screenshot = tmp_path / "shot.png"
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={screenshot}", "--window-size=1200,2400",
         html_path.resolve().as_uri()],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    with Image.open(screenshot) as image:
        assert image.size == (1200, 2400)


def test_diagnosis_shares_get_intervals_without_marks(tmp_path: Path) -> None:
    # LH/VI/Mixed are shares of wrong answers: no run is "best" at them
    runs = [
        crafted_run(
            tmp_path / name,
            "hallusionbench",
            "hallusionbench",
            {"aAcc": 60.0, "LH": lh},
            {"uncertainty": {"LH": _block(lh, 3.0, lh - 6.0, lh + 6.0)}},
            model_args=f"pretrained=org/{name}",
        )  # fmt: skip
        for name, lh in (("model-a", 40.0), ("model-b", 30.0))
    ]
    html_path = write_report_for_runs(runs, tmp_path / "report")
    tables = md_tables((html_path.parent / "report.md").read_text(encoding="utf-8"))
    table = next(table for table in tables.values() if "LH 95% CI" in table[0])
    assert row(table, "crafted (model-a)")["LH 95% CI"] == "[34.00, 46.00]"
    assert row(table, "crafted (model-b)")["LH 95% CI"] == "[24.00, 36.00]"
