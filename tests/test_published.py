"""Published numbers as data: every value checked against the source text the data cites.

HallusionBench and ConTextual cite excerpts of their official READMEs' leaderboards
(``tasks/<b>/published_source.md``); the test parses those tables independently of the data modules and
compares every published value with the printed cell. The other benchmarks' values are transcriptions
not checked against a source text: their ``Source.checked_against`` must be empty, so reports say so.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.registry import benchmarks
from lmms_eval_tasks.reporting.published import PublishedRow, Source

TASKS = Path(__file__).resolve().parents[1] / "lmms_eval_tasks" / "tasks"


def published_module(name: str):
    return importlib.import_module(f"lmms_eval_tasks.tasks.{name}.published")


def markdown_rows(text: str) -> list[list[str]]:
    """The cells of every markdown table row, bold markers and medal emoji removed."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [re.sub(r"\*\*|🥇|🥈|🥉", "", cell).strip() for cell in line.strip().strip("|").split("|")]
        rows.append(cells)
    return rows


def all_rows(module) -> list[PublishedRow]:
    rows = []
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("PUBLISHED") and isinstance(value, tuple):
            rows.extend(row for row in value if isinstance(row, PublishedRow))
    return rows


def test_every_benchmark_has_published_data_with_a_source():
    for name in benchmarks():
        module = published_module(name)
        rows, reasons = module.published_for_task(name)
        assert rows, name
        assert isinstance(reasons, list)
        for row in all_rows(module):
            assert isinstance(row.source, Source), (name, row.label)
            assert row.values and all(isinstance(v, float) for v in row.values.values()), (name, row.label)
            assert set(row.compared) <= set(row.values), (name, row.label)


def test_hallusionbench_values_are_the_readme_leaderboard_cells():
    module = published_module("hallusionbench")
    text = (TASKS / "hallusionbench" / "published_source.md").read_text(encoding="utf-8")
    # Columns: Model | Question Pair Acc | Figure Acc | Easy Question Acc | Hard Question Acc | Question Acc
    printed = {}
    for cells in markdown_rows(text)[1:]:
        name, _, rest = cells[0].partition("<br />")
        judge = "human" if "(Human Eval)" in cells[0] else "gpt"
        printed[(name.strip(), judge)] = [float(cell) for cell in cells[1:6]]
    checked = 0
    for row in all_rows(module):
        if not row.source.checked_against:
            continue
        judge = "human" if "human" in row.source.judge else "gpt"
        cells = printed[(row.printed_as or row.label, judge)]
        assert [row.values[key] for key in module.COLUMNS] == cells, row.label
        checked += 1
    assert checked == len(printed) == 19  # 17 GPT-eval rows + 2 human-eval rows
    # Spot check against the paper-layout values the report showed before (hand-copied): GPT-4V, GPT Eval.
    gpt4v = next(row for row in module.PUBLISHED if row.label == "GPT-4V")
    assert (gpt4v.values["qAcc"], gpt4v.values["fAcc"], gpt4v.values["aAcc"]) == (28.79, 39.88, 65.28)


def test_contextual_values_are_the_readme_leaderboard_cells():
    module = published_module("contextual")
    text = (TASKS / "contextual" / "published_source.md").read_text(encoding="utf-8")
    test_text, _, val_text = text.partition("### Accuracy scores on the Val subset")
    for rows, table in ((module.PUBLISHED, test_text), (module.PUBLISHED_VALIDATION, val_text)):
        # Columns: #, Model, Method, Source, Date, ALL, Time, Shop, Nav, Abs, App, Web, Info, Misc NS
        printed = {
            cells[1]: (cells[4], [float(c) for c in cells[5:14]]) for cells in markdown_rows(table)[1:]
        }
        assert len(rows) == len(printed)
        for row in rows:
            date, cells = printed[row.printed_as or row.label]
            assert [row.values[key] for key in module.COLUMNS] == cells, row.label
            assert date in row.source.table
    assert len(module.PUBLISHED) == 22 and len(module.PUBLISHED_VALIDATION) == 6
    gpt4v = next(row for row in module.PUBLISHED if row.label == "GPT-4V")
    assert gpt4v.values["acceptance_rate"] == 47.4 and "test, all 506" in gpt4v.source.benchmark_version


@pytest.mark.parametrize("name", ["dare", "vrb", "tdiuc", "tallyqa", "dvqa", "vqdv1"])
def test_values_not_checked_against_a_source_text_say_so(name):
    for row in all_rows(published_module(name)):
        assert row.source.checked_against == "" and row.source.excerpt == ""
        assert "not checked against the source text" in str(row.source)


def test_report_sections_show_the_published_data():
    """One source of truth: the sections' published rows are the data modules' rows."""
    from lmms_eval_tasks.tasks.tallyqa import report_section

    assert report_section.PUBLISHED is published_module("tallyqa").PUBLISHED
