"""Independent audit of the ConTextual metrics against the spec (hand-computed numbers in comments)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from lmms_eval_tasks.tasks.contextual import scoring as ctx

DATA = Path(__file__).resolve().parents[2] / "lmms_eval_tasks" / "tasks" / "contextual" / "data"

# ---- judge-reply parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "default", "official"),
    [
        ("Judgement: Yes", True, True),
        ("Judgement: No", False, False),
        # the spec's example: official (Yes anywhere after the marker) credits it; default: first word
        ("Judgement: No. It never says Yes", False, True),
        # official: "No" inside "Not" counts as No
        ("Judgement: Not sure", None, False),
        ("Judgement: maybe", None, None),
        # no marker: an exact "Yes"/"No" reply counts (official is case-sensitive and exact)
        ("Yes", True, True),
        ("No", False, False),
        ("yes", True, None),
        ("The answer is Yes", None, None),
        # only text after the FIRST marker matters; Yes before it is ignored
        ("Yes, hmm. Judgement: No", False, False),
        # official marker needs the space after the colon
        ("Judgement:Yes", True, None),
    ],
)
def test_parse_judge_reply_both_protocols(reply: str, default: bool | None, official: bool | None) -> None:
    assert ctx.parse_judge_reply(reply) is default
    assert ctx.parse_judge_reply(reply, "official") is official


def test_supplied_1_0_verdicts_like_official_gpt4_judgments_json() -> None:
    assert ctx.normalize_verdict(1, 0) is True
    assert ctx.normalize_verdict(0, 0) is False
    assert ctx.normalize_verdict(None, 0) is None


# ---- acceptance rates --------------------------------------------------------------------------------------

# time T F None | web T T | shopping T | navigation-transportation F | stvqa T None | estvqa T F F
CATEGORIES = (
    ["time"] * 3 + ["web"] * 2 + ["shopping", "navigation-transportation"] + ["stvqa"] * 2 + ["estvqa"] * 3
)
VERDICTS = [True, False, None, True, True, True, False, True, None, True, False, False]


def test_acceptance_rates_exclude_unjudged_from_denominators() -> None:
    metrics = ctx.acceptance_metrics(CATEGORIES, VERDICTS)
    # accepted 1+2+1+0+1+1 = 6; judged 2+2+1+1+1+3 = 10 (2 unjudged left out, not counted as No)
    assert metrics["acceptance_rate"] == pytest.approx(60.0)
    assert metrics["unjudged"] == 2 and metrics["judged"] == 10 and metrics["accepted"] == 6
    assert metrics["acceptance_rate_time"] == pytest.approx(50.0)  # 1 / 2 (not 1 / 3)
    assert metrics["acceptance_rate_web"] == pytest.approx(100.0)
    # Misc. Natural Scenes pooled: (1 + 1) / (1 + 3) = 50.0
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(50.0)
    assert metrics["acceptance_rate_stvqa"] == pytest.approx(100.0)  # 1 / 1
    assert metrics["acceptance_rate_estvqa"] == pytest.approx(100.0 / 3)
    # natural = shopping 1/1 + navigation 0/1 + misc 2/4 = 3/6 = 50; digital = time 1/2 + web 2/2 = 3/4 = 75
    assert metrics["acceptance_rate_natural"] == pytest.approx(50.0)
    assert metrics["acceptance_rate_digital"] == pytest.approx(75.0)
    # scenarios without items have no rate (not 0)
    assert metrics["acceptance_rate_abstract"] is None


def test_official_misc_denominator_is_two_times_stvqa() -> None:
    metrics = ctx.acceptance_metrics(CATEGORIES, VERDICTS, protocol="official")
    # official: (1 + 1) / (2 * 1 judged stvqa) = 100.0; everything else unchanged
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(100.0)
    assert metrics["acceptance_rate"] == pytest.approx(60.0)


def test_normal_interval_95() -> None:
    # p = .6, n = 10: half = 1.959964 * sqrt(.6 * .4 / 10) = 1.959964 * .1549193 = .3036363
    low, high = ctx.normal_interval(6, 10)
    assert low == pytest.approx(29.63637, abs=1e-4) and high == pytest.approx(90.36363, abs=1e-4)
    # p = .9, n = 10: half = 1.959964 * .0948683 = .1859385 -> [71.40615, 108.59 clipped to 100]
    low, high = ctx.normal_interval(9, 10)
    assert low == pytest.approx(71.40615, abs=1e-4) and high == pytest.approx(100.0)
    assert ctx.normal_interval(0, 0) == (None, None)
    metrics = ctx.acceptance_metrics(CATEGORIES, VERDICTS)
    assert metrics["acceptance_rate_ci95_low"] == pytest.approx(29.63637, abs=1e-4)  # judged only: n = 10


def test_score_records_with_supplied_replies_end_to_end() -> None:
    records = [
        {
            "image_url": f"u{i}",
            "instruction": "q",
            "response": "r",
            "category": category,
            "prediction": "p",
            "judge_verdict": None if verdict is None else ("Judgement: Yes" if verdict else "Judgement: No"),
        }
        for i, (category, verdict) in enumerate(zip(CATEGORIES, VERDICTS, strict=True))
    ]
    metrics = ctx.score(records, rouge=False)[0]
    assert metrics["acceptance_rate"] == pytest.approx(60.0)  # 6 / 10 judged
    assert metrics["unjudged"] == 2
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(50.0)


# ---- categories -> scenarios -------------------------------------------------------------------------------


def test_scene_groups_match_paper_e2() -> None:
    assert set(ctx.NATURAL_SCENARIOS) == {"shopping", "navigation", "misc_natural_scenes"}
    assert set(ctx.DIGITAL_SCENARIOS) == {"web", "app", "abstract", "infographics", "time"}


@pytest.mark.parametrize(
    ("split", "expected_counts"),
    [
        # counts in the official rohan598/ConTextual data/contextual_{test,val}.csv
        (
            "test",
            {"time": 50, "shopping": 50, "navigation-transportation": 50, "abstract": 50, "app": 50,
             "web": 50, "infographics": 50, "stvqa": 75, "estvqa": 81},
        ),
        (
            "val",
            {"time": 10, "shopping": 10, "navigation-transportation": 10, "abstract": 10, "app": 10,
             "web": 10, "infographics": 10, "stvqa": 15, "estvqa": 15},
        ),
    ],
)  # fmt: skip
def test_every_csv_category_maps_to_its_scenario(split: str, expected_counts: dict[str, int]) -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_parquet(DATA / f"contextual_{split}.parquet")
    counts = frame["category"].value_counts().to_dict()
    assert counts == expected_counts
    scenario_counts: dict[str, int] = {}
    for category, count in counts.items():
        scenario = ctx.CATEGORY_SCENARIO[category]
        scenario_counts[scenario] = scenario_counts.get(scenario, 0) + count
    unit = 50 if split == "test" else 10
    misc = 75 + 81 if split == "test" else 15 + 15
    assert scenario_counts == {
        "time": unit, "shopping": unit, "navigation": unit, "abstract": unit, "app": unit, "web": unit,
        "infographics": unit, "misc_natural_scenes": misc,
    }  # fmt: skip


# ---- leaderboard submission --------------------------------------------------------------------------------


def test_submission_files_match_what_the_authors_collect(tmp_path: Path) -> None:
    from lmms_eval_tasks.tasks.contextual import hooks

    records = [
        {"image_url": "https://x/a.png", "instruction": "i1", "category": "time", "prediction": "It is 3."},
        {"image_url": "https://x/b.png", "instruction": 'i2, "q"', "category": "web", "prediction": ""},
    ]
    paths = hooks.write_submission(records, tmp_path, "contextual_test", "org/model")
    with open(paths["csv"], newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    # the test CSV's columns (image_url, instruction, category) + the model's response
    assert list(rows[0]) == ["image_url", "instruction", "category", "response"]
    assert rows[1]["instruction"] == 'i2, "q"' and rows[0]["response"] == "It is 3."
    # master.json shape: {model: {image_url: response}}
    assert json.loads(paths["json"].read_text()) == {
        "org/model": {"https://x/a.png": "It is 3.", "https://x/b.png": ""}
    }


def test_repeats_average_rates_and_keep_unjudged_out() -> None:
    records = [
        {"image_url": f"u{i}", "instruction": "q", "response": "r", "category": "time", "prediction": "p",
         "judge_verdict": verdicts}
        for i, verdicts in enumerate([[1, 1], [0, None], [1, 0]])
    ]  # fmt: skip
    metrics = ctx.score(records, rouge=False)[0]
    # repeat 1: 2 / 3 = 66.667; repeat 2: (1 + 0) / 2 judged = 50.0 (the None is not a rejection)
    assert metrics["acceptance_rate"] == pytest.approx((200 / 3 + 50) / 2)  # 58.333
    assert metrics["unjudged"] == 1 and metrics["judged"] == 5 and metrics["accepted"] == 3
    # sample std of (66.667, 50): sqrt(2 * 8.3333^2 / 1) = 11.785
    assert metrics["acceptance_rate_std"] == pytest.approx(((200 / 3 - 175 / 3) ** 2 * 2) ** 0.5)
    # majority verdict per question: u0 yes, u1 only one judged repeat (No), u2 tie -> None
    correct = ctx.per_question_correct(records)
    assert correct == {"u0": True, "u1": False, "u2": None}


def test_judge_prompt_is_the_official_template_filled_once() -> None:
    prompts = Path(__file__).parents[1] / "data" / "spec" / "prompts"
    template = (prompts / "contextual_gpt4_judge.txt").read_text()
    item = ctx.parse_item(
        {"image_url": "u", "instruction": "What {prediction}?", "response": "ten", "category": "time",
         "prediction": "It says {groundtruth}"},
        0,
    )  # fmt: skip
    # the official script: PROMPT.format(...) substitutes once; braces inside the values stay literal
    expected = template.format(
        instruction="What {prediction}?", groundtruth="ten", prediction="It says {groundtruth}"
    )
    assert ctx.judge_prompt(item) == expected


def test_interval_for_each_rating() -> None:
    metrics = ctx.acceptance_metrics(CATEGORIES, VERDICTS)
    # e.g. time: 1 accepted of 2 judged: p = .5, half = 1.959964 * sqrt(.25 / 2) = .692952 -> [0, 100] clipped
    # natural: 3 of 6: half = 1.959964 * sqrt(.25 / 6) = .400076 -> [9.9924, 90.0076]
    assert metrics["acceptance_rate_natural_ci95_low"] == pytest.approx(9.9924, abs=1e-3)
    assert metrics["acceptance_rate_natural_ci95_high"] == pytest.approx(90.0076, abs=1e-3)
    assert metrics["acceptance_rate_time_ci95_low"] == pytest.approx(0.0)
    assert metrics["acceptance_rate_time_ci95_high"] == pytest.approx(100.0)
    # digital: 3 of 4: half = 1.959964 * sqrt(.75 * .25 / 4) = 1.959964 * .2165064 = .4243447
    # -> [.75 - .4243447, 1 clipped] = [32.56553, 100]
    assert metrics["acceptance_rate_digital_ci95_low"] == pytest.approx(32.56553, abs=1e-3)
    assert metrics["acceptance_rate_digital_ci95_high"] == pytest.approx(100.0)
    # Misc. pooled: 2 of 4: half = 1.959964 * sqrt(.25 / 4) = .489991 -> [1.0009, 98.9991]
    assert metrics["acceptance_rate_misc_natural_scenes_ci95_low"] == pytest.approx(1.0009, abs=1e-3)
    assert metrics["acceptance_rate_misc_natural_scenes_ci95_high"] == pytest.approx(98.9991, abs=1e-3)
    # a scenario without judged items has no interval (not [0, 0])
    assert metrics["acceptance_rate_abstract_ci95_low"] is None
    # official Misc.: 2 accepted / (2 x 1 judged stvqa) = 1.0: the interval follows that denominator,
    # half = 1.959964 * sqrt(1 * 0 / 2) = 0 -> [100, 100]
    official = ctx.acceptance_metrics(CATEGORIES, VERDICTS, protocol="official")
    assert official["acceptance_rate_misc_natural_scenes_ci95_low"] == pytest.approx(100.0)
    # official rate above 100 (3 accepted / (2 x 1) = 150 %): no interval (statsmodels: NaN), no crash;
    # a clipped [100, 100] would exclude its own estimate
    assert ctx.normal_interval(3, 2) == (None, None)


def test_per_rating_intervals_reach_score_output_averaged_over_repeats() -> None:
    records = [
        {"image_url": f"u{i}", "instruction": "q", "response": "r", "category": "web", "prediction": "p",
         "judge_verdict": verdicts}
        for i, verdicts in enumerate([[1, 1], [0, 1], [1, 0], [1, 1]])
    ]  # fmt: skip
    metrics = ctx.score(records, rouge=False)[0]
    # repeat 1: web 3 of 4, half = .4243447 -> [32.56553, 100]; repeat 2: the same counts -> same interval
    assert metrics["acceptance_rate_web_ci95_low"] == pytest.approx(32.56553, abs=1e-3)
    assert metrics["acceptance_rate_web_ci95_high"] == pytest.approx(100.0)
    assert metrics["acceptance_rate_digital_ci95_low"] == pytest.approx(32.56553, abs=1e-3)
