"""ConTextual scoring: judge-reply parsing (both protocols), acceptance rates by hand, ROUGE-L, records."""

from __future__ import annotations

import json
import math
import time

import pytest

from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.registry import get_benchmark
from lmms_eval_tasks.tasks.contextual.scoring import (
    acceptance_metrics,
    evaluate,
    judge_prompt,
    normal_interval,
    normalize_verdict,
    parse_item,
    parse_judge_reply,
    per_question_correct,
    rule_reply,
    score,
)

# ------------------------------------------------------------------------------------------------------
# judge replies
# ------------------------------------------------------------------------------------------------------

REASONING_YES = (
    "The instruction asks for the time shown on the clock. The ground-truth response says 10:10 and the "
    "predicted response also reads the hands as ten past ten, adding that it is a quartz clock.\n\n"
    "Judgement: Yes"
)
YES_IN_REASONING_THEN_NO = (
    'The predicted response answers "Yes, the shop is open", but the ground truth says the sign reads '
    "CLOSED, so the prediction contradicts it.\nJudgement: No"
)
NO_THEN_YES_AFTER = "Judgement: No. The predicted response never says Yes to the question of the sign."
ECHOED_MARKER = (
    'I think step by step and respond with my "Judgement: " as "Yes" or "No". The prediction names the '
    "wrong exit.\nJudgement: No"
)


@pytest.mark.parametrize(
    ("reply", "default", "official"),
    [
        (REASONING_YES, True, True),
        (YES_IN_REASONING_THEN_NO, False, False),
        # the official rule credits any "Yes" after the marker
        (NO_THEN_YES_AFTER, False, True),
        # the official rule reads from the FIRST marker, here the model echoing the prompt
        (ECHOED_MARKER, False, True),
        ("Step 1: compare.\nJudgement: **Yes**", True, True),
        ("Step 1: compare.\nJudgement: **No**", False, False),
        # bold marker: no literal "Judgement: " for the official rule, and not just "Yes"/"No"
        ("The answer matches.\n**Judgement:** Yes", True, None),
        ("**Judgement: No**", False, False),
        ("Judgement:\n\nYes.", True, None),
        ("judgement: yes", True, None),
        ("Judgment: No", False, None),
        # official: "No" inside "Not"; default: the word after the marker is not a verdict
        ("Judgement: Not correct, the price differs.", None, False),
        ("Judgement: The prediction is correct.", None, None),
        ("The prediction partially matches the reference.", None, None),
        ("Yes", True, True),
        ("No", False, False),
        ("Yes.", True, None),
        ("  **No**  ", False, None),
        ("Yes, it matches.", None, None),
        ("", None, None),
    ],
)
def test_parse_judge_reply(reply: str, default: bool | None, official: bool | None) -> None:
    assert parse_judge_reply(reply) is default
    assert parse_judge_reply(reply, "official") is official


def test_parse_judge_reply_odd_input() -> None:
    assert parse_judge_reply(None) is None
    assert parse_judge_reply(3, "official") is None
    with pytest.raises(ValueError, match="protocol"):
        parse_judge_reply("Yes", "vlmevalkit")


def test_parse_judge_reply_linear_time_on_adversarial_text() -> None:
    text = "Judgement: " * 50_000 + "*" * 100_000 + " maybe"
    started = time.thread_time()
    assert parse_judge_reply(text) is None
    assert parse_judge_reply(text, "official") is None
    assert time.thread_time() - started < 2.0


def test_normalize_verdict() -> None:
    assert normalize_verdict(1, 0) is True
    assert normalize_verdict(0, 0) is False
    assert normalize_verdict(True, 0) is True
    assert normalize_verdict(None, 0) is None
    assert normalize_verdict("No", 0) is False
    assert normalize_verdict(NO_THEN_YES_AFTER, 0) is False
    assert normalize_verdict(NO_THEN_YES_AFTER, 0, "official") is True
    with pytest.raises(RecordError, match="record 4: field 'judge_verdict'"):
        normalize_verdict(2, 4)
    with pytest.raises(RecordError, match="record 5: field 'judge_verdict'"):
        normalize_verdict({"verdict": "Yes"}, 5)


# ------------------------------------------------------------------------------------------------------
# metrics by hand
# ------------------------------------------------------------------------------------------------------

# (category, verdict): None = unjudged
HAND_CASE = [
    ("time", True),
    ("time", False),
    ("shopping", True),
    ("navigation-transportation", False),
    ("navigation-transportation", None),
    ("abstract", True),
    ("app", False),
    ("web", True),
    ("infographics", None),
    ("stvqa", True),
    ("stvqa", True),
    ("estvqa", True),
    ("estvqa", False),
    ("estvqa", False),
]


def test_acceptance_metrics_by_hand() -> None:
    categories = [category for category, _ in HAND_CASE]
    verdicts = [verdict for _, verdict in HAND_CASE]
    metrics = acceptance_metrics(categories, verdicts)
    # judged: 14 items - 2 unjudged = 12; accepted: time 1, shop 1, abs 1, web 1, stvqa 2, estvqa 1 = 7
    assert metrics["judged"] == 12 and metrics["accepted"] == 7 and metrics["unjudged"] == 2
    assert metrics["acceptance_rate"] == pytest.approx(100 * 7 / 12)  # 58.33
    assert metrics["acceptance_rate_time"] == pytest.approx(50.0)  # 1 / 2
    assert metrics["acceptance_rate_shopping"] == pytest.approx(100.0)
    assert metrics["acceptance_rate_navigation"] == pytest.approx(0.0)  # 0 / 1 judged (1 unjudged)
    assert metrics["acceptance_rate_abstract"] == pytest.approx(100.0)
    assert metrics["acceptance_rate_app"] == pytest.approx(0.0)
    assert metrics["acceptance_rate_web"] == pytest.approx(100.0)
    assert metrics["acceptance_rate_infographics"] is None  # nothing judged
    # Misc. Natural Scenes pools stvqa + estvqa: (2 + 1) / (2 + 3) = 60
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(60.0)
    assert metrics["acceptance_rate_stvqa"] == pytest.approx(100.0)
    assert metrics["acceptance_rate_estvqa"] == pytest.approx(100 / 3)
    # natural = shopping + navigation + misc: (1 + 0 + 3) / (1 + 1 + 5) = 4 / 7
    assert metrics["acceptance_rate_natural"] == pytest.approx(100 * 4 / 7)
    # digital = web + app + abstract + infographics + time: (1 + 0 + 1 + 0 + 1) / (1 + 1 + 1 + 0 + 2) = 3 / 5
    assert metrics["acceptance_rate_digital"] == pytest.approx(60.0)
    # Wald interval: p = 7/12 = 0.583333, se = sqrt(0.583333 * 0.416667 / 12) = 0.142319,
    # half = 1.959964 * 0.142319 = 0.278940 -> [0.304393, 0.862274]
    assert metrics["acceptance_rate_ci95_low"] == pytest.approx(30.4393, abs=1e-3)
    assert metrics["acceptance_rate_ci95_high"] == pytest.approx(86.2274, abs=1e-3)


def test_official_misc_denominator_is_twice_stvqa() -> None:
    categories = [category for category, _ in HAND_CASE]
    verdicts = [verdict for _, verdict in HAND_CASE]
    metrics = acceptance_metrics(categories, verdicts, "official")
    # the authors' analysis: (2 + 1) / (2 x 2 judged stvqa) = 75
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(75.0)
    # everything else is the same definition
    assert metrics["acceptance_rate"] == pytest.approx(100 * 7 / 12)
    assert metrics["acceptance_rate_natural"] == pytest.approx(100 * 4 / 7)


def test_official_misc_rate_above_100_has_no_interval() -> None:
    # official Misc.: (accepted stvqa + accepted estvqa) / (2 x judged stvqa) = (1 + 3) / (2 x 1) = 200 %;
    # statsmodels' normal interval of p = 2 takes the root of 2 x (1 - 2) / 2 < 0: NaN. Before, the share
    # was clipped to 1 and the "interval" [100, 100] excluded its own estimate 200.
    categories = ["stvqa"] + ["estvqa"] * 3
    metrics = acceptance_metrics(categories, [True, True, True, True], "official")
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(200.0)
    assert metrics["acceptance_rate_misc_natural_scenes_ci95_low"] is None
    assert metrics["acceptance_rate_misc_natural_scenes_ci95_high"] is None
    assert normal_interval(4, 2) == (None, None)
    # the report's uncertainty record says why, with the estimate kept
    records = [record(i, category, "Judgement: Yes") for i, category in enumerate(categories)]
    resampling = score(records, protocol="official")[1]["resampling"]
    closed = resampling.closed_form["acceptance_rate_misc_natural_scenes"]
    assert closed.estimate == pytest.approx(200.0) and closed.low is None and closed.high is None
    assert "above 100%" in closed.reason
    # the default pooled denominator stays a proportion: 4 / 4 = 100 %, interval [100, 100]
    assert acceptance_metrics(categories, [True] * 4)["acceptance_rate_misc_natural_scenes_ci95_low"] == 100.0


def test_a_degenerate_normal_interval_gives_way_to_wilson_in_the_uncertainty_record() -> None:
    # 0 of 10 accepted: the official Wald interval is the point [0, 0] (kept in the metrics); the record the
    # report's summary reads is Wilson's: z = 1.959964, z^2 = 3.841459, n = 10,
    # centre = (0 + 3.841459 / 20) / (1 + 0.384146) = 0.192073 / 1.384146 = 0.138766,
    # half = 1.959964 / 1.384146 * sqrt(0 + 3.841459 / 400) = 1.416009 * 0.097998 = 0.138767 -> [0, 27.75]
    rejected = [record(i, "stvqa", "Judgement: No") for i in range(10)]
    metrics, details = score(rejected)
    assert (metrics["acceptance_rate_ci95_low"], metrics["acceptance_rate_ci95_high"]) == (0.0, 0.0)
    closed = details["resampling"].closed_form["acceptance_rate"]
    assert closed.method == "wilson" and closed.estimate == 0.0
    assert closed.low == 0.0 and closed.high == pytest.approx(27.753, abs=1e-3)
    assert "[0.00, 0.00]" in closed.reason and "Wilson" in closed.reason
    # 10 of 10: the mirror image, [72.25, 100]
    accepted = [record(i, "stvqa", "Judgement: Yes") for i in range(10)]
    closed = score(accepted)[1]["resampling"].closed_form["acceptance_rate"]
    assert closed.low == pytest.approx(72.247, abs=1e-3) and closed.high == pytest.approx(100.0)
    # 7 of 12 keeps the official normal interval (a proper interval there)
    mixed = [record(i, "stvqa", "Judgement: Yes" if i < 7 else "Judgement: No") for i in range(12)]
    closed = score(mixed)[1]["resampling"].closed_form["acceptance_rate"]
    assert closed.method == "normal" and closed.low == pytest.approx(30.4393, abs=1e-3)


def test_normal_interval_clipped_like_statsmodels() -> None:
    # p = 0.9, n = 10: half = 1.959964 * sqrt(0.09 / 10) = 0.185939 -> [0.714061, 1.085939] -> high clipped
    low, high = normal_interval(9, 10)
    assert low == pytest.approx(71.4061, abs=1e-3) and high == 100.0
    assert normal_interval(0, 5) == (0.0, 0.0)
    assert normal_interval(0, 0) == (None, None)
    low, high = normal_interval(1, 2)  # 0.5 +- 1.959964 * 0.353553 = 0.5 +- 0.692952
    assert (low, high) == (0.0, 100.0)


# ------------------------------------------------------------------------------------------------------
# records
# ------------------------------------------------------------------------------------------------------


def record(index: int, category: str, verdict, response: str = "ten past ten", prediction: str = "10:10"):
    return {
        "image_url": f"https://example.org/{category}/{index}.jpg",
        "instruction": "What time is it?",
        "response": response,
        "category": category,
        "prediction": prediction,
        "judge_verdict": verdict,
    }


def test_score_records_with_supplied_verdicts_matches_hand_case() -> None:
    replies = {True: "Reasoning.\nJudgement: Yes", False: "Judgement: No", None: "I cannot tell."}
    records = [record(i, category, replies[verdict]) for i, (category, verdict) in enumerate(HAND_CASE)]
    metrics, details = score(records)
    assert metrics["acceptance_rate"] == pytest.approx(100 * 7 / 12)
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(60.0)
    assert metrics["unjudged"] == 2
    assert metrics["unjudged_no_verdict_in_reply"] == 2 and metrics["unjudged_judge_failed"] == 0
    assert metrics["items"] == 14 and metrics["judge"] == "supplied" and metrics["protocol"] == "default"
    assert details["per_scenario"]["misc_natural_scenes"] == {
        "items": 5,
        "judged": 5,
        "accepted": 3,
        "unjudged": 0,
    }
    official = score(records, protocol="official")[0]
    assert official["acceptance_rate_misc_natural_scenes"] == pytest.approx(75.0)


def test_score_records_official_parse_changes_the_rate() -> None:
    records = [record(0, "time", NO_THEN_YES_AFTER), record(1, "web", "Judgement: No")]
    assert score(records)[0]["acceptance_rate"] == 0.0
    assert score(records, protocol="official")[0]["acceptance_rate"] == 50.0


def test_score_records_bad_records_name_record_and_field() -> None:
    good = record(0, "time", "Yes")
    with pytest.raises(RecordError, match="record 1: field 'category': unknown category 'clock'"):
        score([good, record(1, "clock", "Yes")])[0]
    missing = dict(record(1, "web", "No"))
    del missing["image_url"]
    with pytest.raises(RecordError, match="record 1: field 'image_url': missing"):
        score([good, missing])[0]
    # duplicates are the record contract's (Benchmark.validate, before any scorer), not the scorer's
    contextual = get_benchmark("contextual")
    with pytest.raises(RecordError, match="record 1: field 'image_url': duplicate record .*also record 0"):
        contextual.validate([good, dict(good)])
    with pytest.raises(RecordError, match="record 1: field 'image_url': conflicting record .*also record 0"):
        contextual.validate([good, {**good, "prediction": "No"}])
    with pytest.raises(RecordError, match="record 0: field 'judge_verdict'"):
        score([record(0, "time", 7)])[0]
    no_reference = dict(record(0, "time", None))
    del no_reference["judge_verdict"]
    del no_reference["response"]
    with pytest.raises(RecordError, match="record 0: field 'response': missing"):
        score([no_reference], judge="rule")[0]


def test_repeats_are_averaged_and_counted() -> None:
    records = [
        record(0, "time", ["Judgement: Yes", "Judgement: No"]),
        record(1, "web", ["Judgement: Yes", None]),
    ]
    metrics = score(records)[0]
    # repeat 0: 2/2 = 100; repeat 1: 0/1 = 0 (one unjudged) -> mean 50, std = sqrt(((50)^2 * 2) / 1) = 70.71
    assert metrics["repeats"] == 2
    assert metrics["acceptance_rate"] == pytest.approx(50.0)
    assert metrics["acceptance_rate_std"] == pytest.approx(math.sqrt(5000))
    assert metrics["unjudged"] == 1 and metrics["unjudged_items"] == 1
    with pytest.raises(RecordError, match="record 1: field 'judge_verdict': 1 repeats here but 2"):
        score([records[0], record(1, "web", "Yes")])[0]


def test_rouge_l_by_hand() -> None:
    # LCS("the cat sat on the mat", "the cat on mat") = 4 tokens: P = 4/4, R = 4/6, F = 2PR/(P+R) = 0.8
    records = [
        record(0, "time", "Yes", response="the cat sat on the mat", prediction="the cat on mat"),
        # rouge-score's tokenizer lower-cases and splits "10:10" into "10 10": identical -> 1.0
        record(1, "web", "No", response="It is 10:10.", prediction="it is 10 10"),
    ]
    metrics = score(records)[0]
    assert metrics["rouge_l"] == pytest.approx(100 * (0.8 + 1.0) / 2)
    assert metrics["rouge_l_items"] == 2
    assert score(records, rouge=False)[0]["rouge_l"] is None


def test_rule_judge_is_a_short_reference_match() -> None:
    assert rule_reply("The clock shows 10:10 in the morning.", "10:10") == "Judgement: Yes"
    assert rule_reply("It is 110:10", "10:10") == "Judgement: No"  # word-aligned only
    assert rule_reply("It costs $4.50.", "$4.50") == "Judgement: Yes"
    assert rule_reply("anything", "a reference that is far too long for a rule judge") is None
    assert rule_reply("anything", "") is None
    records = [
        record(0, "time", None, response="10:10", prediction="It is 10:10."),
        record(1, "shopping", None, response="$3.20", prediction="It costs $2.30."),
        record(2, "web", None, response="a long free-form reference answer about the page layout"),
    ]
    for item in records:
        del item["judge_verdict"]
    evaluation = evaluate(records, judge="rule")
    assert evaluation.verdicts == [[True], [False], [None]]
    assert evaluation.metrics["acceptance_rate"] == 50.0
    assert evaluation.metrics["unjudged"] == 1 and evaluation.metrics["unjudged_judge_failed"] == 1
    assert evaluation.judge["kind"] == "rule"


def test_judge_prompt_is_the_official_template_filled_verbatim() -> None:
    from lmms_eval_tasks.judges.prompts import load_prompt

    item = parse_item(
        record(0, "time", None, response="The {time} is 10:10\n", prediction="{prediction} {0}"), 0
    )
    prompt = judge_prompt(item)
    template = load_prompt("contextual_gpt4_judge")
    expected = (
        template.replace("{instruction}", "What time is it?")
        .replace("{groundtruth}", "The {time} is 10:10\n")
        .replace("Predicted Response: {prediction}", "Predicted Response: {prediction} {0}")
    )
    assert prompt == expected
    assert prompt.endswith("Predicted Response: {prediction} {0}")
    assert "Your job is judge whether" in prompt and "\n \nSome things to remember:" in prompt


def test_per_question_correct() -> None:
    records = [
        record(0, "time", "Judgement: Yes"),
        record(1, "web", "Judgement: No"),
        record(2, "app", "no verdict here"),
    ]
    assert per_question_correct(records) == {
        "https://example.org/time/0.jpg": True,
        "https://example.org/web/1.jpg": False,
        "https://example.org/app/2.jpg": None,  # unjudged: compare leaves it out and counts it
    }
    ties = [record(0, "time", ["Yes", "No"]), record(1, "web", ["Yes", "Yes"])]
    assert per_question_correct(ties) == {
        "https://example.org/time/0.jpg": None,  # a tie across repeats
        "https://example.org/web/1.jpg": True,
    }


def test_compare_command_pairs_by_image_url(tmp_path, capsys) -> None:
    from lmms_eval_tasks.cli import main

    verdicts_a = ["Yes", "Yes", "No", "no verdict", "Yes"]
    verdicts_b = ["Yes", "No", "No", "Yes", "No"]
    paths = []
    for name, verdicts in (("a", verdicts_a), ("b", verdicts_b)):
        path = tmp_path / f"{name}.jsonl"
        rows = [record(i, "time", verdict) for i, verdict in enumerate(verdicts)]
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        paths.append(str(path))
    assert main(["compare", "contextual", *paths]) == 0
    result = json.loads(capsys.readouterr().out)
    # pairs: (Y,Y) both right, (Y,N) b10, (N,N) both wrong, (?,Y) excluded, (Y,N) b10
    assert result["questions"] == 4 and result["excluded"] == 1
    assert (result["b10"], result["b01"], result["both_correct"], result["both_wrong"]) == (2, 0, 1, 1)


def test_saved_judge_replies_are_reused(judge_env) -> None:
    records = judged_records()[:2]
    records[0]["judge_replies"] = ["Judgement: No. The response never says Yes."]
    records[1]["judge_replies"] = [None]  # unjudged in the saved run
    evaluation = evaluate(records)  # no judge is created: nothing left to judge
    assert evaluation.verdicts == [[False], [None]] and evaluation.judge == {}
    assert evaluate(records, protocol="official").verdicts == [[True], [None]]


# ------------------------------------------------------------------------------------------------------
# the LLM judge through the pack's judges package, against the local fake OpenAI server
# ------------------------------------------------------------------------------------------------------


@pytest.fixture
def judge_env(monkeypatch, tmp_path):
    from fake_openai import isolate_judge_env

    isolate_judge_env(monkeypatch, tmp_path)
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_CACHE", str(tmp_path / "judge_cache.sqlite"))
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_MAX_RETRIES", "3")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_BASE", "0.01")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_BACKOFF_MAX", "0.02")
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE_TIMEOUT", "1")
    return monkeypatch


def reasoning_judge(prompt: str) -> str:
    """A judge that reads the filled official prompt and says Yes when the prediction holds the reference."""
    if prompt.startswith("[{"):  # a text + image message: the fake server passes the parts as JSON
        prompt = next(part["text"] for part in json.loads(prompt) if part["type"] == "text")
    reference = prompt.split("\nGround-truth Response: ", 1)[1].split("\nPredicted Response: ", 1)[0]
    prediction = prompt.split("\nPredicted Response: ", 1)[1]
    verdict = "Yes" if reference.lower() in prediction.lower() else "No"
    # reasoning that mentions the other word first, as GPT-4 often does
    return f"Does the prediction say Yes or No to the reference? Let me compare.\nJudgement: {verdict}"


def judged_records() -> list[dict]:
    cases = [
        ("time", "10:10", "The clock shows 10:10."),
        ("shopping", "$4.50", "It costs $3.00."),
        ("navigation-transportation", "Exit 12B", "Take exit 12b towards the airport."),
        ("stvqa", "OPEN", "The sign says CLOSED."),
        ("estvqa", "Bakery", "This is the bakery entrance."),
        ("web", "Subscribe", "Login"),
    ]
    records = []
    for index, (category, reference, prediction) in enumerate(cases):
        item = record(index, category, None, response=reference, prediction=prediction)
        del item["judge_verdict"]
        records.append(item)
    return records


def test_llm_judge_with_injected_faults_scores_nothing_wrong(judge_env) -> None:
    from fake_openai import FakeOpenAIServer, always_fail, combine, fail_first_attempts

    records = judged_records()
    failing = judge_prompt(parse_item(records[5], 5))
    faults = combine(always_fail({failing}, "bad_request"), fail_first_attempts(0.7, sleep=1.5))
    with FakeOpenAIServer(reasoning_judge, faults=faults) as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        judge_env.setenv("OPENAI_API_KEY", "test-key")
        evaluation = evaluate(records, judge="openai")
        assert any(call.fault for call in server.calls if call.prompt != failing)  # faults were injected
        # every prompt the server saw is the official template filled for one of the records
        assert {call.prompt for call in server.calls} == {
            judge_prompt(parse_item(r, i)) for i, r in enumerate(records)
        }
    # expected verdicts: yes, no, yes (case-insensitive containment), no, yes; the failing one unjudged
    assert evaluation.verdicts == [[True], [False], [True], [False], [True], [None]]
    metrics = evaluation.metrics
    assert metrics["acceptance_rate"] == pytest.approx(60.0)  # 3 of 5 judged
    assert metrics["acceptance_rate_misc_natural_scenes"] == pytest.approx(50.0)  # (0 + 1) / (1 + 1)
    assert metrics["acceptance_rate_web"] is None
    assert metrics["unjudged"] == 1 and metrics["unjudged_judge_failed"] == 1
    assert evaluation.judge["kind"] == "openai" and evaluation.judge_usage["retries"] >= 1
    assert [entry["item_id"] for entry in evaluation.judge_batch["unjudged"]] == [records[5]["image_url"]]
    assert "HTTP 400" in evaluation.judge_batch["unjudged"][0]["error"]


def test_llm_judge_replies_are_cached(judge_env) -> None:
    from fake_openai import FakeOpenAIServer

    records = judged_records()
    with FakeOpenAIServer(reasoning_judge) as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        first = score(records, judge="openai")[0]
        calls = server.call_count()
        second = score(records, judge="openai")[0]
        assert server.call_count() == calls == len(records)
    assert first["acceptance_rate"] == second["acceptance_rate"] == pytest.approx(50.0)


def test_image_aware_judge_sends_the_image(judge_env, tmp_path) -> None:
    from fake_openai import FakeOpenAIServer
    from PIL import Image

    records = judged_records()[:2]
    image_path = tmp_path / "clock.png"
    Image.new("RGB", (4, 4), (10, 20, 30)).save(image_path)
    records[0]["image_path"] = str(image_path)
    with FakeOpenAIServer(reasoning_judge) as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        evaluation = evaluate(records, judge="openai", image_judge=True)
        contents = [call.messages[-1]["content"] for call in server.calls]
    images = sorted(
        part["image_url"]["url"][:22]
        for content in contents
        for part in content
        if part["type"] == "image_url"
    )
    assert images == ["data:image/png;base64,", records[1]["image_url"][:22]]
    assert evaluation.verdicts == [[True], [False]]


def test_no_verdict_at_all_fails_loudly(judge_env) -> None:
    from fake_openai import FakeOpenAIServer

    from lmms_eval_tasks.judges.pipeline import JudgingFailed

    with FakeOpenAIServer(lambda prompt: "I am not sure.") as server:
        judge_env.setenv("OPENAI_API_URL", server.base_url)
        with pytest.raises(JudgingFailed, match="contextual: judging failed entirely"):
            score(judged_records(), judge="openai")[0]


def test_score_command(tmp_path, capsys) -> None:
    from lmms_eval_tasks.cli import main

    replies = {True: "Reasoning.\nJudgement: Yes", False: "Judgement: No", None: "I cannot tell."}
    records = [record(i, category, replies[verdict]) for i, (category, verdict) in enumerate(HAND_CASE)]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in records), encoding="utf-8")
    assert main(["score", "contextual", str(path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["acceptance_rate"] == pytest.approx(100 * 7 / 12) and printed["unjudged"] == 2
    assert printed["acceptance_rate_infographics"] is None  # nothing judged: null, never 0
    assert main(["score", "contextual", str(path), "-o", "protocol=official"]) == 0
    assert json.loads(capsys.readouterr().out)["acceptance_rate_misc_natural_scenes"] == pytest.approx(75.0)
    records[3]["category"] = "maps"
    path.write_text("".join(json.dumps(item) + "\n" for item in records), encoding="utf-8")
    assert main(["score", "contextual", str(path)]) == 1  # refused by the record contract, with the file line
    error = capsys.readouterr().err
    assert "record 3 (line 4): field 'category': unknown value 'maps'; known: time, shopping, " in error
