"""Screened outputs in the host's table, end to end: the real launcher and host `openai` client over HTTP to a
local fake vision server that answers the bundled VQDv1 and TallyQA samples with hedges, master keys and
honest answers chosen by the question. The host's results, its printed table and the pack's reports must
carry the hand-computed screening counts, next to the benchmarks' own count column ('unparsed'), and the
reports must mark the runs whose score depends on those outputs (docs/judges.md, "Judge integrity")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer
from helpers import offline_environment, results_json, run_launcher

pytestmark = pytest.mark.slow

# VQDv1 sample (19 queries, "Show the [colour] <shape> in the picture."): 7 circle queries (question ids 0, 3,
# 5, 7, 11, 15, 18), 5 triangle queries (2, 6, 8, 12, 14), 7 square queries (1, 4, 9, 10, 13, 16, 17).
# Zero-box queries: 3 and 18 (circle), 6 (triangle), 9, 13 and 16 (square).
VQD_ANSWERS = {"circle": "Yes No", "triangle": ":", "square": "[[]]"}  # hedge, master key, honest "no box"
# TallyQA sample (15 questions): 6 about circles (800000, 800005, 800008, 800010, 800011, 800013 "red
# circles"), 5 about triangles (800002, 800006, 800007, 800012, 800014), 4 about squares (800001, 800003,
# 800004, 800009; answers 3, 2, 1, 7).
TALLY_ANSWERS = {
    "circles": "0 1 2 3 4 5",  # a hedge: every small count
    "triangles": "Let's solve this problem step by step.",  # a master key: an opener with no answer
    "squares": "2",  # an honest answer
}
MARK = "!!! SCORE DEPENDS ON SCREENED OUTPUTS"


def question_of(prompt: str) -> str:
    """The text part of a recorded chat prompt (the fake server records multimodal content as JSON)."""
    try:
        content = json.loads(prompt)
    except ValueError:
        return prompt
    return " ".join(part.get("text", "") for part in content if isinstance(part, dict))


def crafted_reply(prompt: str) -> str:
    question = question_of(prompt)
    shape = re.search(r"Show the (?:\w+ )?(circle|triangle|square) in the picture", question)
    if shape:
        return VQD_ANSWERS[shape.group(1)]
    shape = re.search(r"How many (?:shapes are red )?(circles|triangles|squares)\b", question)
    assert shape, f"unexpected prompt: {question[:200]!r}"
    return TALLY_ANSWERS[shape.group(1)]


def pack_report(output: Path, task: str) -> dict:
    """The pack's one report of ``task`` under ``output``."""
    found = sorted(output.rglob(f"{task}_report.json"))
    assert len(found) == 1, found
    return json.loads(found[0].read_text(encoding="utf-8"))


def test_screened_outputs_reach_the_host_table_and_mark_the_reports(tmp_path: Path) -> None:
    output = tmp_path / "out"
    with FakeOpenAIServer(crafted_reply) as server:
        completed = run_launcher(
            "--model", "openai", "--model_args",
            f"base_url={server.base_url},api_key=test-key,model_version=fake-vlm,max_retries=1,retry_backoff_s=0",
            "--tasks", "vqdv1_sample,tallyqa_sample", "--output_path", str(output),
            environment=offline_environment(LMMS_EVAL_TASKS_JUDGE_CACHE=str(tmp_path / "judge.sqlite")),
        )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = results_json(output)["results"]
    vqd, tally = results["vqdv1_sample"], results["tallyqa_sample"]

    # VQDv1: 7 "Yes No" (hedges) + 5 ":" (content-free) = 12 screened; "[[]]" is VQDv1's own "no box" answer
    assert vqd["screened_outputs,none"] == 12
    assert vqd["unparsed,none"] == 12  # 7 + 5 answers without a box ("[[]]" is an answer, not unparsed)
    # every answer says "no box": right (F1 1) on the 6 zero-box queries only: 6 / 19 = 31.58 %
    assert vqd["micro_f1,none"] == pytest.approx(100 * 6 / 19)
    # TallyQA: 6 number lists (hedges) + 5 reasoning openers (content-free) = 11 screened
    assert tally["screened_outputs,none"] == 11
    assert tally["unparsed,none"] == 11  # neither a list of numbers nor an opener parses as one count
    # "2" on the 4 square questions is right once (800003): 1 / 15 = 6.67 %
    assert tally["micro_accuracy,none"] == pytest.approx(100 * 1 / 15)
    # the host's printed table has the row, next to the count column
    for task, screened in (("vqdv1_sample", 12), ("tallyqa_sample", 11)):
        row = rf"\|{task}\s*\|none\s*\|\s*0\|screened_outputs\s*\|↓\s*\|\s*{screened}\.0000\|"
        assert re.search(row, completed.stdout), completed.stdout[-3000:]

    for task, screened, counts in (
        ("vqdv1_sample", 12, {"judge_markers": 0, "content_free": 5, "hedge": 7, "repeated": 0}),
        ("tallyqa_sample", 11, {"judge_markers": 0, "content_free": 5, "hedge": 6, "repeated": 0}),
    ):
        report = pack_report(output, task)
        assert report["metrics"]["screened_outputs"] == screened
        assert report["details"]["screening"]["counts"] == counts
        marks = [line for line in report["warnings"] if line.startswith(MARK)]
        total = 19 if task == "vqdv1_sample" else 15
        assert len(marks) == 1 and f": {screened} of {total} outputs" in marks[0], report["warnings"]
    # VQDv1's count warning says what the scorer does with them, once (not the shared "scored as wrong")
    warnings = pack_report(output, "vqdv1_sample")["warnings"]
    unparsed = [line for line in warnings if re.match(r"\d+ unparsed", line)]
    assert len(unparsed) == 1, warnings
    assert unparsed[0].startswith("12 unparsed answers (no box found): scored as 'no box'")
    assert "RIGHT on zero-box queries" in unparsed[0]
