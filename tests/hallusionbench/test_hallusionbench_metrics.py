"""HallusionBench metrics: decision tree branches, crafted hand-computed sets, official-code equivalence."""

from __future__ import annotations

import importlib.util
import json
import math
import random
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.tasks.hallusionbench import scoring as hb


def question(
    category="VD",
    subcategory="illusion",
    visual_input="2",
    figure_id="1",
    set_id="0",
    question_id="0",
    gt_answer="1",
) -> hb.Question:
    return hb.Question(0, category, subcategory, visual_input, set_id, figure_id, question_id, gt_answer)


def record(
    category,
    subcategory,
    set_id,
    figure_id,
    question_id,
    visual_input,
    gt_answer,
    verdict=None,
    same=None,
    prediction="Yes",
):
    row = {
        "category": category,
        "subcategory": subcategory,
        "visual_input": visual_input,
        "set_id": set_id,
        "figure_id": figure_id,
        "sample_note": "note",
        "question_id": question_id,
        "question": "Is it?",
        "gt_answer_details": "It is.",
        "gt_answer": gt_answer,
        "filename": None if visual_input == "0" else f"./{category}/{subcategory}/{set_id}_{figure_id}.png",
        "prediction": prediction,
    }
    if verdict is not None:
        row["judge_verdict"] = verdict
    if same is not None:
        row["judge_same"] = same
    return row


# ----------------------------------------------------------------------------------------------------------
# Decision tree: every branch, expected (LH, VI) tuple written out
# ----------------------------------------------------------------------------------------------------------

VD_REF = question("VD", "illusion", "1", "0")
VS_REF = question("VS", "chart", "0", "0")
VD_EDIT = question("VD", "illusion", "2", "1")
VS_ORIG = question("VS", "chart", "1", "1")
VS_EDIT = question("VS", "chart", "2", "2")

TREE_CASES = [
    # figure_id "0", VD: wrong or unclear on the original image -> VI
    (VD_REF, "0", None, None, (0, 1)),
    (VD_REF, "2", None, None, (0, 1)),
    (VD_REF, "1", None, None, (0, 0)),
    # figure_id "0", VS (no image): wrong -> LH; unclear is acceptable without an image
    (VS_REF, "0", None, None, (1, 0)),
    (VS_REF, "2", None, None, (0, 0)),
    (VS_REF, "1", None, None, (0, 0)),
    # VD edited figure
    (VD_EDIT, "0", "1", True, (1, 1)),  # original right, edited wrong with the same answer -> Mixed
    (VD_EDIT, "0", "1", False, (0, 1)),  # original right, edited wrong with another answer -> VI
    (VD_EDIT, "2", "1", None, (0, 1)),  # original right, edited unclear -> VI
    (VD_EDIT, "0", "0", True, (0, 1)),  # original wrong too -> VI (same flag not read)
    (VD_EDIT, "0", "2", False, (0, 1)),
    (VD_EDIT, "2", "0", None, (0, 1)),
    (VD_EDIT, "2", "2", None, (0, 1)),
    (VD_EDIT, "1", "0", None, (0, 0)),
    (VD_EDIT, "1", "1", None, (0, 0)),
    # VS with an image, no-image answer wrong (o = "0")
    (VS_EDIT, "0", "0", True, (1, 0)),  # same wrong answer with and without the image -> LH
    (VS_EDIT, "0", "0", False, (1, 1)),  # different wrong answers -> Mixed
    (VS_ORIG, "2", "0", None, (1, 1)),  # unclear with the image -> Mixed
    (VS_ORIG, "1", "0", None, (0, 0)),
    # no-image answer unclear (o = "2")
    (VS_EDIT, "0", "2", True, (0, 1)),
    (VS_ORIG, "2", "2", None, (0, 1)),
    (VS_ORIG, "1", "2", None, (0, 0)),
    # no-image answer right (o = "1")
    (VS_ORIG, "2", "1", None, (0, 1)),
    (VS_ORIG, "0", "1", True, (0, 1)),  # original image, wrong -> VI whatever the flag
    (VS_ORIG, "0", "1", False, (0, 1)),
    (VS_EDIT, "0", "1", True, (1, 0)),  # edited image, same answer as without it -> LH
    (VS_EDIT, "0", "1", False, (0, 1)),  # edited image, another wrong answer -> VI
    (VS_EDIT, "1", "1", None, (0, 0)),
]


@pytest.mark.parametrize(("q", "verdict", "reference", "same", "expected"), TREE_CASES)
def test_decision_tree_branch(q, verdict, reference, same, expected):
    assert hb.diagnose(q, verdict, reference, same) == expected


def test_every_incorrect_question_gets_a_nonzero_tuple():
    for q, verdict, reference, same, expected in TREE_CASES:
        wrong = hb.question_correct(q, verdict) == 0
        assert (expected != (0, 0)) == wrong, (q, verdict, reference, same)


def test_diagnosis_undetermined_when_inputs_are_unknown():
    assert hb.diagnose(VD_EDIT, "0", None, True) is None  # reference member missing or unjudged
    assert hb.diagnose(VD_EDIT, "0", "1", None) is None  # the consistency flag is needed and unjudged
    assert hb.diagnose(VS_EDIT, "0", "1", None) is None
    assert hb.diagnose(VS_EDIT, "0", "0", None) is None
    assert hb.diagnose(VD_EDIT, "2", "1", None) == (0, 1)  # flag not needed: decided
    assert hb.diagnose(VS_ORIG, "0", "1", None) == (0, 1)


def test_correctness_rule_and_reply_parsing():
    assert hb.question_correct(VS_REF, "2") == 1  # "I don't know" is right without an image
    assert hb.question_correct(VS_ORIG, "2") == 0
    assert hb.question_correct(VD_REF, "2") == 0
    assert hb.parse_correctness_reply("Incorrect.") == "0"
    assert hb.parse_correctness_reply("“correct”") == "1"
    assert hb.parse_correctness_reply("The prediction is unclear") == "2"
    assert hb.parse_correctness_reply("") == "2"
    assert hb.parse_consistency_reply("Same") is True
    assert hb.parse_consistency_reply("different") is False


# ----------------------------------------------------------------------------------------------------------
# Crafted set with hand-computed metrics
# ----------------------------------------------------------------------------------------------------------


def crafted_records():
    """10 questions: VD illusion set 0 (2 pairs x 2 figures), VS chart set 0 (2 pairs x no image + 2 figures).

    verdict -> correct:       VD q0: f0 "1"->1, f1 "0"->0    VD q1: f0 "1"->1, f1 "1"->1
                              VS q0: f0 "2"->1 (no-image rule), f1 "1"->1, f2 "1"->1
                              VS q1: f0 "0"->0, f1 "1"->1, f2 "2"->0
    """
    return [
        record("VD", "illusion", "0", "0", "0", "1", "1", "1"),
        record("VD", "illusion", "0", "1", "0", "2", "0", "0", same=False),
        record("VD", "illusion", "0", "0", "1", "1", "1", "1"),
        record("VD", "illusion", "0", "1", "1", "2", "1", "1", same=True),
        record("VS", "chart", "0", "0", "0", "0", "1", "2"),
        record("VS", "chart", "0", "1", "0", "1", "1", "1", same=True),
        record("VS", "chart", "0", "2", "0", "2", "0", "1", same=False),
        record("VS", "chart", "0", "0", "1", "0", "0", "0"),
        record("VS", "chart", "0", "1", "1", "1", "0", "1", same=False),
        record("VS", "chart", "0", "2", "1", "2", "1", "2", same=True),
    ]


def fill_same(records):
    for row in records:
        row.setdefault("judge_same", True)
    return records


def test_crafted_set_hand_computed():
    result = hb.score(fill_same(crafted_records()))[0]
    # correct = [1,0,1,1, 1,1,1, 0,1,0] -> 7 of 10
    assert result["aAcc"] == pytest.approx(70.0)
    # pairs: VD q0 {1,0} wrong, VD q1 {1,1} right, VS q0 {1,1,1} right, VS q1 {0,1,0} wrong -> 2/4
    assert result["qAcc"] == pytest.approx(50.0)
    # figures (VS figure 0 excluded): VD f0 {1,1} right, VD f1 {0,1} inconsistent, VS f1 {1,1} right,
    # VS f2 {1,0} inconsistent -> 2/4
    assert result["fAcc"] == pytest.approx(50.0)
    assert result["consistency_correct"] == pytest.approx(50.0)
    assert result["consistency_inconsistent"] == pytest.approx(50.0)
    assert result["consistency_wrong"] == pytest.approx(0.0)
    # easy = visual_input != "2" per pair: VD q0 {1}, VD q1 {1}, VS q0 {1,1}, VS q1 {0,1} -> 3/4
    assert result["easy_aAcc"] == pytest.approx(75.0)
    # hard = visual_input == "2" per pair: VD q0 {0}, VD q1 {1}, VS q0 {1}, VS q1 {0} -> 2/4
    assert result["hard_aAcc"] == pytest.approx(50.0)
    # gt = [1,0,1,1, 1,1,0, 0,0,1] mean 0.6; [c == gt] = [1,1,1,1, 1,1,0, 1,0,0] mean 0.7 -> 0.1
    assert result["pct_diff"] == pytest.approx(0.1)
    # wrong rows: VD q0 f1 (gt 0), VS q1 f0 (gt 0), VS q1 f2 (gt 1) -> 2/3
    assert result["fp_ratio"] == pytest.approx(2 / 3)
    assert result["overall"] == pytest.approx((70 + 50 + 50) / 3)
    # diagnosis: VD q0 f1: o="1", j="0", different -> VI; VS q1 f0: no image, wrong -> LH;
    # VS q1 f2: o="0", j="2" -> Mixed; all other rows (0,0) -> LH 1, VI 1, Mixed 1 of 3
    assert result["LH"] == pytest.approx(100 / 3)
    assert result["VI"] == pytest.approx(100 / 3)
    assert result["Mixed"] == pytest.approx(100 / 3)
    # pairs: VD q0 (0,1) VI; VS q1 (1,0)+(0,0)+(1,1) = (2,1) Mixed -> VI 50, Mixed 50
    assert result["pair_LH"] == pytest.approx(0.0)
    assert result["pair_VI"] == pytest.approx(50.0)
    assert result["pair_Mixed"] == pytest.approx(50.0)
    # per category: VD correct [1,0,1,1] -> 75; VS [1,1,1,0,1,0] -> 4/6
    assert result["VD_aAcc"] == pytest.approx(75.0)
    assert result["VS_aAcc"] == pytest.approx(400 / 6)
    assert result["VD_illusion_qAcc"] == pytest.approx(50.0)
    assert result["VS_chart_fAcc"] == pytest.approx(50.0)  # VS f1 right, VS f2 inconsistent
    assert result["VS_map_aAcc"] is None  # no questions in that subcategory
    assert result["questions"] == 10 and result["unjudged_verdicts"] == 0
    assert result["judge"] == "supplied" and result["repeats"] == 1


def test_verdict_spellings_are_equivalent():
    words = {"1": "correct", "0": "incorrect", "2": "unclear"}
    as_codes = hb.score(fill_same(crafted_records()))[0]
    rows = fill_same(crafted_records())
    for row in rows:
        row["judge_verdict"] = words[row["judge_verdict"]].upper()
    assert hb.score(rows)[0]["aAcc"] == as_codes["aAcc"]
    rows = fill_same(crafted_records())
    for row in rows:
        row["judge_verdict"] = int(row["judge_verdict"])
        row["judge_same"] = "same" if row["judge_same"] else "different"
    assert hb.score(rows)[0]["LH"] == as_codes["LH"]


def test_unjudged_question_is_left_out_not_scored_wrong():
    rows = fill_same(crafted_records())
    rows[9]["judge_verdict"] = None  # VS q1 f2 (it was wrong) is now unjudged
    result = hb.score(rows)[0]
    # aAcc over the 9 judged: 7 of 9
    assert result["aAcc"] == pytest.approx(700 / 9)
    # pair VS q1 has an unjudged member -> left out: VD q0 wrong, VD q1 right, VS q0 right -> 2/3
    assert result["qAcc"] == pytest.approx(200 / 3)
    # figure VS f2 left out: VD f0 right, VD f1 inconsistent, VS f1 right -> 2/3
    assert result["fAcc"] == pytest.approx(200 / 3)
    # hard pairs: VD q0 {0} wrong, VD q1 {1} right, VS q0 {1} right (VS q1: only the unjudged row) -> 2/3
    assert result["hard_aAcc"] == pytest.approx(200 / 3)
    assert result["unjudged_verdicts"] == 1 and result["unjudged_questions"] == 1
    rows[9]["judge_verdict"] = "0"  # had the judge answered "incorrect", aAcc would drop to 70
    assert hb.score(rows)[0]["aAcc"] == pytest.approx(70.0)


def test_unjudged_consistency_leaves_the_question_undiagnosed():
    rows = fill_same(crafted_records())
    rows[1]["judge_same"] = None  # VD q0 f1: o="1", j="0" needs the flag
    result = hb.score(rows)[0]
    assert result["unjudged_consistency_needed"] == 1 and result["undiagnosed_verdicts"] == 1
    # remaining diagnosed wrong rows: LH (VS q1 f0) and Mixed (VS q1 f2)
    assert result["LH"] == pytest.approx(50.0) and result["Mixed"] == pytest.approx(50.0)
    assert result["VI"] == pytest.approx(0.0)
    assert result["aAcc"] == pytest.approx(70.0)  # correctness is unaffected


def test_repeats_are_averaged_and_spread_reported():
    rows = fill_same(crafted_records())
    # repeat 0 as crafted (aAcc 70); repeat 1: VD q0 f1 flips to correct (aAcc 80); repeat 2: unjudged
    for row in rows:
        row["judge_verdict"] = [row["judge_verdict"]] * 3
        row["judge_same"] = [row["judge_same"]] * 3
    rows[1]["judge_verdict"] = ["0", "1", None]
    result = hb.score(rows)[0]
    # repeat 2 scores 9 judged questions with 7 right (the unjudged one was wrong in repeat 0) -> 700/9
    assert result["repeats"] == 3
    assert result["aAcc"] == pytest.approx((70 + 80 + 700 / 9) / 3)
    values = [70, 80, 700 / 9]
    mean = sum(values) / 3
    assert result["aAcc_std"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in values) / 2))
    evaluation = hb.evaluate(rows)
    assert [m["aAcc"] for m in evaluation.per_repeat] == pytest.approx(values)
    assert evaluation.verdicts[1] == ["0", "1", None]


def test_missing_pair_reference_is_counted_not_crashing():
    rows = fill_same(crafted_records())[1:]  # drop VD q0 figure 0 (as a --limit run might)
    result = hb.score(rows)[0]
    assert result["missing_pair_reference"] == 1
    assert result["aAcc"] == pytest.approx(600 / 9)


@pytest.mark.parametrize(
    ("change", "field", "index"),
    [
        (lambda rows: rows[3].pop("category"), "category", 3),
        (lambda rows: rows[2].update(category="VX"), "category", 2),
        (lambda rows: rows[4].update(subcategory="illusion"), "subcategory", 4),
        (lambda rows: rows[5].update(visual_input="7"), "visual_input", 5),
        (lambda rows: rows[5].update(visual_input="0"), "visual_input", 5),
        (lambda rows: rows[6].update(gt_answer="yes"), "gt_answer", 6),
        (lambda rows: rows[7].update(judge_verdict="maybe"), "judge_verdict", 7),
        (lambda rows: rows[8].update(judge_same="perhaps"), "judge_same", 8),
        (lambda rows: rows[9].pop("judge_verdict"), "judge_verdict", 9),
        (lambda rows: rows[2].update(judge_verdict=["1", "1"]), "judge_verdict", 2),
        # a duplicate names the identity's first field; the message lists every identity value
        (lambda rows: rows[3].update(question_id="0", figure_id="1"), "category", 3),
    ],
)
def test_bad_records_name_the_record_and_field(change, field, index):
    rows = fill_same(crafted_records())
    change(rows)
    with pytest.raises(RecordError) as caught:
        benchmark = get_benchmark("hallusionbench")
        benchmark.validate(rows)  # the record contract, then the scorer's own checks
        benchmark.score(rows)
    assert caught.value.field == field and caught.value.record_index == index


def test_a_second_record_of_one_question_names_both_records():
    rows = fill_same(crafted_records())
    rows[3].update(question_id="0", figure_id="1")  # record 1 is VD/illusion/set 0/figure 1/question 0
    with pytest.raises(RecordError) as caught:
        get_benchmark("hallusionbench").validate(rows)
    assert str(caught.value) == (
        "record 3: field 'category': conflicting record (category='VD', subcategory='illusion', "
        "set_id='0', figure_id='1', question_id='0'); also record 1: each record may appear once"
    )


def test_unknown_option_is_rejected():
    with pytest.raises(TypeError):
        hb.score(fill_same(crafted_records()), judgee="rule")[0]


def test_cli_scores_a_jsonl_file(tmp_path, capsys):
    from lmms_eval_tasks.cli import main

    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in fill_same(crafted_records())), encoding="utf-8")
    assert main(["score", "hallusionbench", str(path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["aAcc"] == pytest.approx(70.0) and printed["overall"] == pytest.approx(170 / 3)
    for key in hb.HEADLINE_METRICS:
        assert key in printed
    assert main(["score", "hallusionbench", str(path), "-o", "nonsense=1"]) == 2
    rows = fill_same(crafted_records())
    rows[4]["subcategory"] = "maps"
    path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    assert main(["score", "hallusionbench", str(path)]) == 1
    assert "record 4 (line 5): field 'subcategory'" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------------------
# Equivalence with the official computation (tianyi-lab/HallusionBench utils.py + evaluation.py)
# ----------------------------------------------------------------------------------------------------------
# An independent, deliberately literal re-statement of the official functions (same loops, same string
# keys, same order of tests), used as the oracle on randomised inputs with pre-supplied verdicts.


def load_benchmark_module():
    """The benchmark script's module (its 1129-row synthetic generator), loaded from its file."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "hallusionbench_scoring.py"
    spec = importlib.util.spec_from_file_location("hallusionbench_scoring_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def official_assign_correctness(rows):
    for r in rows:
        if r["category"] == "VS" and int(r["figure_id"]) == 0:
            r["correct"] = 1 if int(r["verdict"]) in (1, 2) else 0
        else:
            r["correct"] = 1 if int(r["verdict"]) == 1 else 0


def official_per_question(rows):
    seen = {}
    for r in rows:
        name = "_".join([r["category"], r["subcategory"], r["set_id"], r["figure_id"], r["question_id"]])
        assert name not in seen
        seen[name] = r["correct"]
    return 100 * sum(1 for v in seen.values() if v) / len(seen)


def official_per_figure(rows):
    figures = {}
    for r in rows:
        if r["category"] == "VS" and r["figure_id"] == "0":
            continue
        name = "_".join([r["category"], r["subcategory"], r["set_id"], r["figure_id"]])
        c, t = figures.get(name, (0, 0))
        figures[name] = (c + r["correct"], t + 1)
    correct = sum(1 for c, t in figures.values() if c == t)
    wrong = sum(1 for c, t in figures.values() if c != t and c == 0)
    inconsistent = len(figures) - correct - wrong
    total = len(figures)
    return 100 * correct / total, 100 * inconsistent / total, 100 * wrong / total


def official_pair_all(rows):
    """qAcc plus the per-question LH/VI/Mix counters (the official *_cg numbers) and pair-level counts."""
    orig = {}
    for r in rows:
        if r["figure_id"] == "0":
            orig["_".join([r["category"], r["subcategory"], r["set_id"], r["question_id"]])] = r["verdict"]
    pairs, analysis_by_pair = {}, {}
    lh_q = vi_q = mix_q = 0
    for r in rows:
        name = "_".join([r["category"], r["subcategory"], r["set_id"], r["question_id"]])
        c, t = pairs.get(name, (0, 0))
        pairs[name] = (c + r["correct"], t + 1)
        j = r["verdict"]
        analysis = (0, 0)
        if r["figure_id"] == "0":
            if r["category"] == "VD":
                if j == "0" or j == "2":
                    analysis = (0, 1)
            elif j == "0":
                analysis = (1, 0)
        else:
            o = orig[name]
            same = r["same"]
            if r["category"] == "VD":
                if o == "1" and j == "0":
                    analysis = (1, 1) if same == "1" else (0, 1)
                elif o == "1" and j == "2":
                    analysis = (0, 1)
                elif j == "0" or j == "2":
                    analysis = (0, 1)
            else:
                if o == "0":
                    if j == "0" and same == "1":
                        analysis = (1, 0)
                    elif j == "0":
                        analysis = (1, 1)
                    elif j == "2":
                        analysis = (1, 1)
                elif o == "2":
                    if j == "0" or j == "2":
                        analysis = (0, 1)
                else:
                    if j == "2":
                        analysis = (0, 1)
                    elif j == "0":
                        if r["visual_input"] == "1":
                            analysis = (0, 1)
                        elif r["visual_input"] == "2":
                            analysis = (1, 0) if same == "1" else (0, 1)
                        else:
                            raise AssertionError("Data error")
        if analysis[0] > 0 and analysis[1] > 0:
            mix_q += 1
        elif analysis[0] > 0:
            lh_q += 1
        elif analysis[1] > 0:
            vi_q += 1
        lh, vi = analysis_by_pair.get(name, (0, 0))
        analysis_by_pair[name] = (lh + analysis[0], vi + analysis[1])
    correct = wrong = lh_p = vi_p = mix_p = 0
    for name, (c, t) in pairs.items():
        a = analysis_by_pair[name]
        if c == t:
            correct += 1
        else:
            wrong += 1
        if a[0] > 0 and a[1] > 0:
            mix_p += 1
        elif a[0] > 0:
            lh_p += 1
        elif a[1] > 0:
            vi_p += 1
    assert wrong == mix_p + lh_p + vi_p
    return {"qAcc": 100 * correct / len(pairs), "q": (lh_q, vi_q, mix_q), "p": (lh_p, vi_p, mix_p)}


def official_pair_subset(rows, keep):
    pairs = {}
    for r in rows:
        if not keep(r):
            continue
        name = "_".join([r["category"], r["subcategory"], r["set_id"], r["question_id"]])
        c, t = pairs.get(name, (0, 0))
        pairs[name] = (c + r["correct"], t + 1)
    return 100 * sum(1 for c, t in pairs.values() if c == t) / len(pairs)


def official_yes_ratio(rows):
    yes_gt = [int(r["gt_answer"]) for r in rows]
    yes_pred = [int(int(r["correct"]) == int(r["gt_answer"])) for r in rows]
    fp = [int(r["gt_answer"]) for r in rows if int(r["correct"]) == 0]
    return sum(yes_pred) / len(yes_pred) - sum(yes_gt) / len(yes_gt), (len(fp) - sum(fp)) / len(fp)


def official_all(rows):
    """The official leaderboard numbers for ``rows`` (a list of dicts with verdict/same as strings)."""
    rows = [dict(r) for r in rows]
    official_assign_correctness(rows)
    pair = official_pair_all(rows)
    f_correct, f_inconsistent, f_wrong = official_per_figure(rows)
    pct_diff, fp_ratio = official_yes_ratio(rows)
    lh, vi, mix = pair["q"]
    lh_p, vi_p, mix_p = pair["p"]
    out = {
        "aAcc": official_per_question(rows),
        "qAcc": pair["qAcc"],
        "fAcc": f_correct,
        "easy_aAcc": official_pair_subset(rows, lambda r: r["visual_input"] != "2"),
        "hard_aAcc": official_pair_subset(rows, lambda r: r["visual_input"] == "2"),
        "consistency_correct": f_correct,
        "consistency_inconsistent": f_inconsistent,
        "consistency_wrong": f_wrong,
        "pct_diff": pct_diff,
        "fp_ratio": fp_ratio,
        "LH": 100 * lh / (lh + vi + mix),
        "VI": 100 * vi / (lh + vi + mix),
        "Mixed": 100 * mix / (lh + vi + mix),
        "pair_LH": 100 * lh_p / (lh_p + vi_p + mix_p),
        "pair_VI": 100 * vi_p / (lh_p + vi_p + mix_p),
        "pair_Mixed": 100 * mix_p / (lh_p + vi_p + mix_p),
    }
    out["overall"] = (out["aAcc"] + out["fAcc"] + out["qAcc"]) / 3
    return out


def random_benchmark(rng: random.Random):
    """A random but well-formed HallusionBench-shaped set with random verdicts and consistency flags."""
    rows = []
    for category, subcategories in hb.CATEGORY_SUBCATEGORIES.items():
        for subcategory in rng.sample(subcategories, rng.randint(1, len(subcategories))):
            for set_id in range(rng.randint(1, 3)):
                figure_count = rng.randint(1 if category == "VD" else 2, 4)
                for question_id in range(rng.randint(1, 3)):
                    for figure_id in range(figure_count):
                        if category == "VD":
                            visual_input = "1" if figure_id == 0 else "2"
                        else:
                            visual_input = (
                                "0"
                                if figure_id == 0
                                else ("1" if figure_id == 1 and rng.random() < 0.8 else "2")
                            )
                        rows.append(
                            record(
                                category,
                                subcategory,
                                str(set_id),
                                str(figure_id),
                                str(question_id),
                                visual_input,
                                rng.choice("01"),
                                rng.choice("0112"),
                                rng.choice([True, False]),
                            )
                        )
    rng.shuffle(rows)
    return rows


def as_official_rows(rows):
    return [{**r, "verdict": r["judge_verdict"], "same": "1" if r["judge_same"] else "0"} for r in rows]


@pytest.mark.parametrize("seed", range(60))
def test_matches_official_computation_on_random_sets(seed):
    rng = random.Random(seed)
    rows = random_benchmark(rng)
    ours = hb.score(rows)[0]
    official_rows = as_official_rows(rows)
    groups = {"": official_rows}
    for category in hb.CATEGORY_SUBCATEGORIES:
        groups[category] = [r for r in official_rows if r["category"] == category]
    compared = 0
    for group, subset in groups.items():
        if not subset:
            continue
        try:
            expected = official_all(subset)
        except ZeroDivisionError:  # official code divides by the number of wrong answers
            continue
        for name, value in expected.items():
            assert ours[hb.metric_key(group, name)] == pytest.approx(value, abs=1e-9), (seed, group, name)
            compared += 1
    assert compared > 0


def test_official_equivalence_on_a_full_size_set():
    """1129-row set shaped like the benchmark (the benchmark script's generator), one seed."""
    rows = load_benchmark_module().synthetic_records(random.Random(7))
    assert len(rows) == 1129
    ours = hb.score(rows)[0]
    expected = official_all(as_official_rows(rows))
    for name, value in expected.items():
        assert ours[name] == pytest.approx(value, abs=1e-9), name


def test_only_questions_whose_diagnosis_reads_the_flag_need_consistency():
    rows = crafted_records()
    questions = hb.parse_questions(rows)
    structure = hb.build_structure(questions)
    verdicts = [[hb.normalize_verdict(row["judge_verdict"], index)] for index, row in enumerate(rows)]
    # VD q0 f1: o="1", j="0" -> needed; VS q1 f2: o="0", j="2" -> not read; VS q0 rows: o="2" -> not read
    assert hb.consistency_needed(structure, verdicts) == [1]
    verdicts[9] = ["0"]  # VS q1 f2 now wrong with a wrong no-image answer -> LH or Mixed depends on the flag
    assert hb.consistency_needed(structure, verdicts) == [1, 9]


def test_supplied_verdicts_without_flags_use_the_judge_for_consistency():
    rows = crafted_records()  # judge_same given only where crafted; drop them all
    for row in rows:
        row.pop("judge_same", None)
        row["prediction"] = "Yes"
    rows[1]["prediction"] = "No"  # VD q0 f1 vs figure 0 "Yes": the rule judge says "different" -> VI
    result = hb.score(rows, judge="rule")[0]
    assert result["aAcc"] == pytest.approx(70.0)  # correctness from the supplied verdicts
    assert result["VI"] == pytest.approx(100 / 3) and result["judge"] == "rule"
    rows[1]["prediction"] = "Yes"  # same answer -> Mixed
    assert hb.score(rows, judge="rule")[0]["Mixed"] == pytest.approx(200 / 3)


def test_rule_judge_compares_with_the_validated_gt_answer():
    """Validation accepts integer or padded ids (1, " 0 "); the rule judge must read the normalised gt."""
    rows = [
        record("VD", "illusion", "0", "0", "0", "1", "1", prediction="Yes, it is."),
        record("VD", "illusion", "0", "1", "0", "2", "0", prediction="No."),
    ]
    rows[0]["gt_answer"] = 1
    rows[1]["gt_answer"] = " 0 "
    result = hb.score(rows, judge="rule")[0]
    # "Yes" to a yes-question and "No" to a no-question: 2 of 2 right -> aAcc 100, the one pair right
    assert result["aAcc"] == pytest.approx(100.0)
    assert result["qAcc"] == pytest.approx(100.0)


# VLMEvalKit's yes/no extraction (vlmeval.smp.process_punctuation + YOrN_Extraction), case by case:
# only ; / [ ] " { } ( ) = + \ _ - > < @ ` , ? ! are handled - deleted when the mark has a space next to it
# anywhere in the text (or the text holds digit,digit), else turned into a space; then up to 32 periods
# not next to a digit are deleted; "*", ":" and "'" stay glued to the word.
VLMEVALKIT_EXTRACTION_CASES = [
    ("Yes.", "yes"),  # "yes." -> period deleted -> ["yes"]
    ("No, it is not.", "no"),  # ", " present -> "," deleted -> ["no", "it", "is", "not"]
    ("**Yes**", None),  # "*" is not handled -> ["**yes**"]
    ("Yes: there is no such bar.", "no"),  # ":" is not handled -> ["yes:", ..., "no", ...] -> no
    ("No.The value is 3.5", None),  # "no.the" -> "nothe" (period deleted, not spaced); "3.5" kept
    ("No,1,000 units", None),  # digit,digit present -> every "," deleted -> ["no1000", "units"]
    ("yes-no", None),  # no "- " / " -" -> "-" becomes a space -> ["yes", "no"] -> both -> unknown
    ("The answer is 'no'.", None),  # "'" is not handled -> ["'no'"]
    ("a." * 32 + " no.", None),  # the 32 periods of "a." are deleted, the 33rd stays -> ["no."]
    ("It is (yes) clear", "yes"),  # "(" and ")" touch no space -> spaces -> ["yes"]
]


@pytest.mark.parametrize(("text", "expected"), VLMEVALKIT_EXTRACTION_CASES)
def test_vlmevalkit_yes_no_extraction(text, expected):
    assert hb.vlmevalkit_yes_no(text) == expected


def test_vlmevalkit_variant_uses_vlmevalkits_extraction():
    """Exact-matching mode (rule judge: the LLM matcher answers "Unknown"), 4 image questions + 1 no-image."""
    rows = [
        record("VD", "illusion", "0", "0", "0", "1", "1", prediction="**Yes**"),  # unknown -> wrong
        record("VD", "illusion", "0", "1", "0", "2", "0", prediction="No, the lines are equal."),  # right
        record("VS", "chart", "0", "0", "0", "0", "1", prediction="Yes."),  # no image: dropped
        record("VS", "chart", "0", "1", "0", "1", "1", prediction="Yes."),  # right
        record("VS", "chart", "0", "2", "0", "2", "0", prediction="No."),  # right
    ]
    result = hb.score(rows, variant="vlmevalkit", judge="rule")[0]
    assert result["dropped_no_image_questions"] == 1 and result["llm_matched"] == 1
    # right = [0, 1, 1, 1] -> aAcc 3/4 = 75
    assert result["aAcc"] == pytest.approx(75.0)
    # pairs: VD q0 {0, 1} wrong, VS q0 {1, 1} right -> 1/2
    assert result["qAcc"] == pytest.approx(50.0)
    # figures: VD f0 {0} wrong, VD f1 {1}, VS f1 {1}, VS f2 {1} right -> 3/4
    assert result["fAcc"] == pytest.approx(75.0)
    assert result["overall"] == pytest.approx((75 + 50 + 75) / 3)


def test_vlmevalkit_variant_report_says_why_it_has_no_standard_errors():
    """The VLMEvalKit variant has no resampling: the report's uncertainty block says so (as before the
    one-scorer change), instead of silently having no standard errors and no reason."""
    from lmms_eval_tasks.framework.intervals import attach_intervals

    rows = [
        record("VD", "illusion", "0", "0", "0", "1", "1", prediction="Yes"),
        record("VD", "illusion", "0", "1", "0", "2", "0", prediction="No"),
    ]
    metrics, details = attach_intervals("hallusionbench", *hb.score(rows, variant="vlmevalkit", judge="rule"))
    assert not [key for key in metrics if key.endswith("_stderr")]
    assert "resampling" not in details
    reason = details["uncertainty"]["_error"]["reason"]
    assert "official variant only" in reason and "vlmevalkit" in reason
    # the official variant keeps its intervals
    metrics, details = attach_intervals(
        "hallusionbench", *hb.score(rows, judge="rule"), bootstrap_resamples=20
    )
    assert "aAcc_stderr" in metrics and "_error" not in details["uncertainty"]
