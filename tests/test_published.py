"""Published numbers as data: every value checked against the source text the data cites.

HallusionBench and ConTextual cite excerpts of their official READMEs' leaderboards, VRB the accuracy
table image of its official repository (``tasks/<b>/published_source.md``); the tests parse those tables
independently of the data modules and compare every published value with the printed cell. Values not
checked against a source text carry an empty ``Source.checked_against`` and the reason, so reports say so.
"""

from __future__ import annotations

import importlib
import re
from importlib.util import find_spec
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.registry import benchmarks
from lmms_eval_tasks.reporting.published import PublishedRow, Source
from lmms_eval_tasks.reproduction import published_for_task

TASKS = Path(__file__).resolve().parents[1] / "lmms_eval_tasks" / "tasks"


def published_module(name: str):
    return importlib.import_module(f"lmms_eval_tasks.tasks.{name}.published")


def publishing() -> list[str]:
    """The benchmarks with published numbers (a ``published`` module; a new benchmark may have none yet)."""
    names = [name for name in benchmarks() if find_spec(f"lmms_eval_tasks.tasks.{name}") is not None]
    return sorted(name for name in names if find_spec(f"lmms_eval_tasks.tasks.{name}.published") is not None)


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
    papers = {"contextual", "dare", "dvqa", "hallusionbench", "tallyqa", "tdiuc", "vqdv1", "vrb"}
    assert papers <= set(publishing())
    for name in publishing():
        module = published_module(name)
        rows, reasons = published_for_task(module, name)
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


# Where a checked value stands: a paper's table or figure number, or a repository file at a commit.
LOCATION = re.compile(r"\b(Table|Figure|Fig\.) ?\d+|\bcommit [0-9a-f]{7,40}\b")
# Which paper: an arXiv identifier or a venue and year.
PAPER = re.compile(r"\barXiv \d{4}\.\d{4,5}\b|\b(CVPR|ICML|WACV|NeurIPS|ICLR|ECCV|ACL|EMNLP) 20\d\d\b")


@pytest.mark.parametrize("name", publishing())
def test_every_published_value_has_a_source_of_a_checked_form(name):
    """Checked: names the text, the excerpt file next to the data, and the table/figure or file@commit.
    Unchecked: says so (in reports too) and why."""
    rows = all_rows(published_module(name))
    assert rows, name
    for row in rows:
        source = row.source
        assert isinstance(source, Source), (name, row.label)
        assert PAPER.search(source.paper), (name, row.label, source.paper)
        assert source.table and source.benchmark_version, (name, row.label)
        if source.checked_against:
            assert source.excerpt and (TASKS / name / source.excerpt).is_file(), (name, row.label)
            assert LOCATION.search(source.table), (name, row.label, source.table)
            assert not source.unchecked_reason, (name, row.label)
            assert "not checked" not in str(source)
        else:
            assert source.excerpt == "", (name, row.label)
            assert len(source.unchecked_reason) > 20, (name, row.label)
            assert "not checked against the source text" in str(source), (name, row.label)


def test_which_values_are_checked():
    """The census the docs state (docs/comparing-with-papers.md): checked values per benchmark."""
    checked = {}
    for name in publishing():
        for row in all_rows(published_module(name)):
            if row.source.checked_against:
                checked[name] = checked.get(name, 0) + len(row.values)
    assert checked == {"hallusionbench": 19 * 5, "contextual": (22 + 6) * 9, "vrb": 4 * 3}


@pytest.mark.parametrize("name", ["dare", "tdiuc", "tallyqa", "dvqa", "vqdv1"])
def test_values_not_checked_against_a_source_text_say_so(name):
    for row in all_rows(published_module(name)):
        assert row.source.checked_against == "" and row.source.excerpt == ""
        assert "not checked against the source text" in str(row.source)
        assert "was not available" in row.source.unchecked_reason


def test_vrb_values_are_the_repository_table_cells():
    module = published_module("vrb")
    text = (TASKS / "vrb" / "published_source.md").read_text(encoding="utf-8")
    # Columns: Model, 14 corruptions (A_{v,c}), A_v, A_v0, A_rel_v (%)
    printed = {cells[0]: [float(cell) for cell in cells[1:]] for cells in markdown_rows(text)[1:]}
    assert list(printed) == ["ViLT", "BLIP", "VLE", "PNP"]
    checked = [row for row in module.PUBLISHED if row.source.checked_against]
    assert [row.label for row in checked] == list(printed)
    for row in checked:
        *per_corruption, average, clean, drop_percent = printed[row.label]
        assert row.values["accuracy_clean"] == clean and row.values["accuracy_average"] == average
        assert row.values["relative_accuracy_drop"] == pytest.approx(drop_percent / 100, abs=1e-12)
        # The transcription is self-consistent: A_v is the mean of the 14 printed A_{v,c} (to rounding),
        # e.g. ViLT (0.576 + 0.664 + ... + 0.705) / 14 = 9.204 / 14 = 0.65743 -> 0.657.
        assert sum(per_corruption) / 14 == pytest.approx(average, abs=0.0006)
        # A^rel_v = (A_v0 - A_v) / A_v0 lies within the rounding box of the printed A_v0, A_v (+-0.0005):
        # ViLT (0.713 - 0.657) / 0.713 = 7.854% -> 7.85. VLE prints 10.21 where its printed A_v0, A_v give
        # (0.771 - 0.693) / 0.771 = 10.117%; 10.21 is reachable only at the edge of rounding
        # ((0.7715 - 0.6925) / 0.7715 = 10.240%), so it is kept as printed (docs note it).
        low = (clean - 0.0005 - (average + 0.0005)) / (clean - 0.0005)
        high = (clean + 0.0005 - (average - 0.0005)) / (clean + 0.0005)
        assert low <= drop_percent / 100 <= high, row.label
    # The A_c row under the table (per-corruption mean over the 4 models) confirms the columns:
    # shot (0.576 + 0.627 + 0.567 + 0.418) / 4 = 0.547, as printed.
    shot = [printed[model][0] for model in printed]
    assert round(sum(shot) / 4, 3) == 0.547
    llava = [row for row in module.PUBLISHED if not row.source.checked_against]
    assert [row.label for row in llava] == ["LLaVA-1.5-7B", "LLaVA-1.5-13B"]


def test_revisiting_values_carry_the_recomputation_that_corroborates_them():
    """Not checked against the paper, but each names what the authors' per-question files reproduce."""
    for name in ("tdiuc", "dvqa", "tallyqa", "vqdv1"):
        for row in all_rows(published_module(name)):
            corroboration = row.source.corroboration
            assert "hypo_testing/" in corroboration and "commit 9292b07" in corroboration
    vqd = {row.label: row.source.corroboration for row in published_module("vqdv1").PUBLISHED}
    assert "25.0677" in vqd["LLaVA-1.5-7B"] and "doubtful" in vqd["LLaVA-1.5-7B"]


def test_report_sections_show_the_published_data():
    """One source of truth: the sections' published rows are the data modules' rows."""
    from lmms_eval_tasks.tasks.tallyqa import report_section

    assert report_section.PUBLISHED is published_module("tallyqa").PUBLISHED
