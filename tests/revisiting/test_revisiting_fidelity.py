"""Fidelity to the "Revisiting MLLM Evaluation" paper and the authors' scripts: each known difference decided.

One test (or a few) per item of the fidelity closure: McNemar as the paper computed it, Unicode digits under
``protocol=official``, the authors' rounding of the slim subset sizes, TallyQA's decimal numerals, and where
a truncated annotation file is broken.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from lmms_eval_tasks.cli import main

# --- 1. McNemar as the paper computed it ----------------------------------------------------------------


def tdiuc_runs(b01: int, b10: int, both_right: int, both_wrong: int) -> tuple[list[dict], list[dict]]:
    """Two TDIUC record lists with exactly these cells: b01 = A wrong and B right, b10 = A right, B wrong."""
    cells = [(0, 1)] * b01 + [(1, 0)] * b10 + [(1, 1)] * both_right + [(0, 0)] * both_wrong
    runs: tuple[list[dict], list[dict]] = ([], [])
    for number, pair in enumerate(cells):
        for run, right in zip(runs, pair, strict=True):
            # "zzqx" has no WordNet synset and differs from the label: wrong; the label itself: right
            run.append(
                {
                    "question_id": number,
                    "question_type": "color",
                    "labeled_answer": "red",
                    "prediction": "red" if right else "zzqx",
                }
            )
    return runs


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("b01", "b10", "paper_p", "corrected_p"),
    [
        # TDIUC, run A = LLaVA-1.5-13B, run B = LLaVA-NeXT (paper: p = 0.2355; the authors' hypo_testing CSV:
        # NeXT wrong and 13B right 2059 times, the reverse 2013, so with A = 13B b01 = 2013, b10 = 2059)
        # n = 4072, z = (2059 - 2013) / sqrt(4072) = 46 / 63.812 = 0.72087; one-sided P(Z >= z) = 0.2355
        # two-sided corrected: chi2 = (46 - 1)^2 / 4072 = 0.49730, p = 0.4807
        (2013, 2059, 0.2355, 0.4807),
        # TDIUC, run A = GPT-4o, run B = LLaVA-1.5-13B (paper: p = 0.0031; CSV: GPT-4o wrong, 13B right 3152)
        # n = 6090, z = 214 / sqrt(6090) = 214 / 78.038 = 2.7422; one-sided P(Z >= z) = 0.00305
        # two-sided corrected: chi2 = 213^2 / 6090 = 7.4498, p = 0.0063
        (3152, 2938, 0.0031, 0.0063),
    ],
)
def test_compare_test_paper_prints_the_papers_p_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], b01: int, b10: int, paper_p: float, corrected_p: float
) -> None:
    run_a, run_b = tdiuc_runs(b01, b10, both_right=40, both_wrong=7)
    file_a = write_jsonl(tmp_path / "a.jsonl", run_a)
    file_b = write_jsonl(tmp_path / "b.jsonl", run_b)
    assert main(["compare", "tdiuc", str(file_a), str(file_b), "--test", "paper"]) == 0
    paper = json.loads(capsys.readouterr().out)
    assert (paper["b01"], paper["b10"]) == (b01, b10)
    z = abs(b01 - b10) / math.sqrt(b01 + b10)
    assert paper["statistic"] == pytest.approx(z * z)  # the uncorrected chi-square, z^2
    assert paper["p_value"] == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))
    assert round(paper["p_value"], 4) == paper_p
    assert paper["variant"] == "paper" and paper["sided"].startswith("one-sided")
    assert paper["better"] == ("b" if b01 > b10 else "a")
    assert "one-sided toward the better run" in paper["method"]
    # the default stays two-sided with continuity correction, and says so
    assert main(["compare", "tdiuc", str(file_a), str(file_b)]) == 0
    default = json.loads(capsys.readouterr().out)
    assert round(default["p_value"], 4) == corrected_p
    assert default["variant"] == "corrected" and default["sided"] == "two-sided"
    assert default["statistic"] == pytest.approx((abs(b01 - b10) - 1) ** 2 / (b01 + b10))


def test_compare_test_uncorrected_is_twice_the_paper_p(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # b01 = 30, b10 = 10: chi2 = 400 / 40 = 10, two-sided p = erfc(sqrt(5)) = 0.001565; paper = half of it
    run_a, run_b = tdiuc_runs(30, 10, both_right=3, both_wrong=2)
    file_a = write_jsonl(tmp_path / "a.jsonl", run_a)
    file_b = write_jsonl(tmp_path / "b.jsonl", run_b)
    assert main(["compare", "tdiuc", str(file_a), str(file_b), "--test", "uncorrected"]) == 0
    uncorrected = json.loads(capsys.readouterr().out)
    assert uncorrected["statistic"] == pytest.approx(10.0)
    assert uncorrected["p_value"] == pytest.approx(math.erfc(math.sqrt(5.0)))
    assert main(["compare", "tdiuc", str(file_a), str(file_b), "--test", "paper"]) == 0
    assert json.loads(capsys.readouterr().out)["p_value"] == pytest.approx(math.erfc(math.sqrt(5.0)) / 2)


# --- 2. Unicode digits under protocol=official ------------------------------------------------------------

# Full-width, Arabic-Indic, Devanagari and Bengali digits are str.isdecimal(): num2words reads them (its
# Decimal() accepts any Unicode decimal digit) and the official TDIUC and DVQA scripts count them as numbers.
UNICODE_DIGITS = ["３", "٣", "३", "৩", "１０", "٢١"]  # 3, 3, 3, 3, 10, 21


def test_official_protocol_reads_unicode_decimal_digits_as_numbers() -> None:
    from lmms_eval_tasks.tasks.revisiting.scoring import official_digits_to_words

    assert [official_digits_to_words(text) for text in UNICODE_DIGITS] == [
        "three", "three", "three", "three", "ten", "twenty-one",
    ]  # fmt: skip
    # superscripts are isdigit() but not decimal: num2words cannot read them (script crash); left as text
    assert official_digits_to_words("²") == "²"
    assert official_digits_to_words("10²", powers_of_ten=True) == "one hundred"  # DVQA's power-of-ten rule
    assert official_digits_to_words("10²") == "10²"  # TDIUC has no such rule (the script would crash)


def test_unicode_digits_tdiuc_and_dvqa_official_match_the_scripts(tmp_path: Path) -> None:
    from lmms_eval_tasks.tasks.dvqa import scoring as dvqa
    from lmms_eval_tasks.tasks.tdiuc import scoring as tdiuc
    from tests.revisiting.test_revisiting_official import as_records, run_official

    labels = ["3", "3", "3", "3", "10", "21", "4", "10"]
    predictions = [*UNICODE_DIGITS, "３", "١٠"]  # the last two: 3 vs label 4 (wrong), 10 vs 10 (right)
    tdiuc_rows = [
        {"question_id": i, "question_type": "counting", "labeled_answer": label, "predicted_answer": text}
        for i, (label, text) in enumerate(zip(labels, predictions, strict=True))
    ]
    printed = run_official("tdiuc_eval_restated.py", tdiuc_rows, tmp_path)
    # 7 of 8 right (only "３" vs "4" is wrong): counting accuracy 0.875
    assert "Question type: counting: accuracy: 0.8750, questions = 8, correct = 7" in printed
    records = as_records(tdiuc_rows)
    assert tdiuc.score(records, protocol="official")[0]["accuracy_counting"] == pytest.approx(87.5)
    # the default protocol reads only ASCII digits: "３" is text and matches no label (0 of 8)
    assert tdiuc.score(records)[0]["accuracy_counting"] == 0.0

    dvqa_rows = [
        {"question_id": i, "template_id": "data", "labeled_answer": label, "predicted_answer": text}
        for i, (label, text) in enumerate(zip(labels, predictions, strict=True))
    ]
    printed = run_official("dvqa_eval_restated.py", dvqa_rows, tmp_path)
    assert re.search(r"micro accuracy: 0\.8750", printed), printed
    official = dvqa.score(as_records(dvqa_rows, "answer"), protocol="official")[0]
    assert official["micro_accuracy"] == pytest.approx(87.5)


# --- 3. slim sizes: the authors' rounding reproduces the released subset sizes ----------------------------

# Synthetic full datasets of the paper's full sizes. The per-type counts are chosen so that the authors'
# formula gives the released per-type subset counts (TDIUC: object_presence 10,766, absurd 6,020, color
# 3,124, counting 2,645, object_recognition 1,534, scene_recognition 1,101, positional_reasoning 614,
# sport_recognition 502, attribute 459, activity_recognition 200, sentiment_understanding 200,
# utility_affordance 171 = 27,336; DVQA: reasoning 15,844, data 9,269, structure 3,930 = 29,043).
TDIUC_FULL = {
    "object_presence": 215_333, "absurd": 120_411, "color": 62_490, "counting": 52_910,
    "object_recognition": 30_690, "scene_recognition": 22_030, "positional_reasoning": 12_290,
    "sport_recognition": 10_050, "attribute": 9_190, "utility_affordance": 171,
    "activity_recognition": 1_651, "sentiment_understanding": 1_652,
}  # fmt: skip
DVQA_EASY = {"reasoning": 316_415, "data": 184_983, "structure": 79_159}  # val_easy: 580,557
DVQA_HARD = {"reasoning": 317_406, "data": 185_806, "structure": 78_109}  # val_hard: 581,321
VQDV1_SINGLE = {"simple": 102_083, "color": 34_028, "positional": 34_016}  # 0- and 1-box queries
VQDV1_MULTI = 20_047  # queries with 2+ boxes, all kept


def entries(counts: dict[str, int], type_field: str, answer_field: str) -> list[dict]:
    return [{type_field: name, answer_field: "a"} for name, count in counts.items() for _ in range(count)]


def test_official_rounding_gives_the_released_tdiuc_size() -> None:
    from lmms_eval_tasks.tasks.revisiting.slim import KINDS, official_group_quota, slim

    full = entries(TDIUC_FULL, "question_type", "labeled_answer")
    assert len(full) == 538_868
    # T = int(0.05 * 538,868) = int(26,943.4) = 26,943; object_presence: int(26,943 * 215,333 / 538,868)
    # = int(10,766.5...) = 10,766; activity_recognition: int(26,943 * 1,651 / 538,868) = 82 < 200 -> 200;
    # utility_affordance: 171 < 200 questions -> all 171
    assert official_group_quota(215_333, 538_868, 0.05, 200) == 10_766
    assert official_group_quota(1_651, 538_868, 0.05, 200) == 200
    assert official_group_quota(171, 538_868, 0.05, 200) == 171
    official = slim(full, KINDS["tdiuc"], group_by="type", rounding="official", seed=0)
    assert len(official.entries) == 27_336
    assert official.counts["object_presence"] == (215_333, 10_766)
    # the paper's ceil(m * r): object_presence ceil(10,766.65) = 10,767 ... 9 types one more: 27,345
    assert len(slim(full, KINDS["tdiuc"], group_by="type", seed=0).entries) == 27_345


def test_official_rounding_gives_the_released_dvqa_tallyqa_vqdv1_sizes() -> None:
    from lmms_eval_tasks.tasks.revisiting.slim import KINDS, slim

    # DVQA: each file apart. easy T = int(0.025 * 580,557) = 14,513, hard T = int(14,533.025) = 14,533;
    # the floors lose 2 + 1: 14,511 + 14,532 = 29,043 (the paper's Table 1 misprints 29,025)
    sizes = [
        len(
            slim(
                entries(counts, "template_id", "answer"), KINDS["dvqa"], group_by="type", rounding=rounding
            ).entries
        )
        for rounding in ("official", "paper")
        for counts in (DVQA_EASY, DVQA_HARD)
    ]
    assert sizes[0] + sizes[1] == 29_043
    assert sizes[2] + sizes[3] == 29_050  # ceil per template rounds up instead
    # TallyQA: r = 1, the whole test set (simple 22,991 + complex 15,598)
    tally = entries({True: 22_991, False: 15_598}, "issimple", "answer")
    assert len(slim(tally, KINDS["tallyqa"], group_by="type", rounding="official").entries) == 38_589
    # VQDv1: 20,047 multi-box queries kept; M = 170,127 0/1-box queries, T = int(17,012.7) = 17,012, floors
    # 10,207 + 3,402 + 3,401 = 17,010 -> 37,057 of 190,174 (ceil: 10,209 + 3,403 + 3,402 = 17,014 -> 37,061)
    vqd = [
        {"question_type": name, "gtbox": [[0, 0, 1, 1]] if i % 2 else [[]]}
        for name, count in VQDV1_SINGLE.items()
        for i in range(count)
    ] + [{"question_type": "simple", "gtbox": [[0, 0, 1, 1], [1, 1, 2, 2]]}] * VQDV1_MULTI
    assert len(vqd) == 190_174
    assert len(slim(vqd, KINDS["vqdv1"], group_by="type", rounding="official").entries) == 37_057
    assert len(slim(vqd, KINDS["vqdv1"], group_by="type").entries) == 37_061


def test_cli_slim_rounding_official(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 1,010 color + 5,000 counting, r = 0.05, k = 20, by type: T = int(300.5) = 300;
    # official color int(300 * 1,010 / 6,010) = int(50.42) = 50, counting int(249.58) = 249 -> 299
    # paper: ceil(50.5) = 51 + ceil(250) = 250 -> 301
    full = entries({"color": 1_010, "counting": 5_000}, "question_type", "labeled_answer")
    source = tmp_path / "full.json"
    source.write_text(json.dumps(full), encoding="utf-8")
    common = ["slim", "tdiuc", "--input", str(source), "--ratio", "0.05", "--min", "20", "--group-by", "type"]
    assert main([*common, "--out", str(tmp_path / "o.json"), "--rounding", "official"]) == 0
    assert (
        "kept 299 of 6010 (r=0.05, k=20, seed=0, group by type, rounding official)" in capsys.readouterr().out
    )
    assert len(json.loads((tmp_path / "o.json").read_text())) == 299
    assert main([*common, "--out", str(tmp_path / "p.json")]) == 0
    assert "kept 301 of 6010 (r=0.05, k=20, seed=0, group by type, rounding paper)" in capsys.readouterr().out


# --- 5. a truncated annotation file says where it is broken -----------------------------------------------


def test_truncated_annotation_file_names_the_line_where_it_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lmms_eval_tasks.framework.input_checks import RecordError
    from lmms_eval_tasks.framework.preparing import read_annotations

    full = [{"question_id": i, "question_type": "color", "labeled_answer": "red"} for i in range(50)]
    text = json.dumps(full, indent=1)  # 5 lines per entry + the brackets: 252 lines
    cut = text[: text.index('"question_id": 30,')]  # cut in the 31st entry, on line 1 + 30 * 5 + 2 = 153
    source = tmp_path / "TDIUC_sampling.json"
    source.write_text(cut, encoding="utf-8")
    with pytest.raises(RecordError) as caught:
        read_annotations(source)
    message = str(caught.value)
    assert message.startswith("record TDIUC_sampling.json line 153 column")
    assert "truncated" in message and "line 1 " not in message
    # a broken value in the middle is not "truncated": its own line and column
    source.write_text(text.replace('"red"', "red", 1), encoding="utf-8")  # entry 0's answer, line 5
    # line 5 is '  "labeled_answer": red': 2 spaces + 18 characters, so red starts in column 21
    with pytest.raises(RecordError, match=r"line 5 column 21: field '<json>': not JSON \(Expecting value\)$"):
        read_annotations(source)
    # the CLI's last line is the cause
    source.write_text(cut, encoding="utf-8")
    assert main(["slim", "tdiuc", "--input", str(source), "--out", str(tmp_path / "o.json")]) == 1
    assert "line 153" in capsys.readouterr().err.strip().splitlines()[-1]


def test_annotation_file_with_a_byte_order_mark_reads_and_non_utf8_names_the_byte(tmp_path: Path) -> None:
    from lmms_eval_tasks.framework.input_checks import RecordError
    from lmms_eval_tasks.framework.preparing import read_annotations

    entries = [{"question_id": 1, "question_type": "color", "labeled_answer": "red"}]
    # a UTF-8 BOM (Notepad, PowerShell) was reported as "truncated; download or copy it again"
    source = tmp_path / "TDIUC_sampling.json"
    source.write_bytes(b"\xef\xbb\xbf" + json.dumps(entries).encode("utf-8"))
    assert read_annotations(source) == entries
    # Latin-1 "caf\xe9" on line 2: the error names file, line and byte (it named neither before);
    # offset: '[{"question_id": 1,' is 19 bytes, the newline 1, '"labeled_answer": "caf' 22 -> 42
    source.write_bytes(b'[{"question_id": 1,\n"labeled_answer": "caf\xe9"}]')
    pattern = r"TDIUC_sampling\.json line 2: .*not UTF-8 \(byte 0xe9 at offset 42\): save the file as UTF-8$"
    with pytest.raises(RecordError, match=pattern):
        read_annotations(source)


def test_compare_metric_without_a_paired_comparison_says_what_it_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--metric` on a count (no interval) or on no metric at all: exit 2, and the line lists the metrics
    that can be compared instead of claiming the benchmark lacks a metric it has."""
    run_a, run_b = tdiuc_runs(b01=3, b10=1, both_right=4, both_wrong=2)
    a, b = write_jsonl(tmp_path / "a.jsonl", run_a), write_jsonl(tmp_path / "b.jsonl", run_b)
    for metric in ("questions", "nope"):
        assert main(["compare", "tdiuc", str(a), str(b), "--metric", metric, "--resamples", "50"]) == 2
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert f"no paired comparison of {metric!r}" in line and "micro_accuracy" in line, line
    assert main(["compare", "tdiuc", str(a), str(b), "--metric", "micro_accuracy", "--resamples", "50"]) == 0
