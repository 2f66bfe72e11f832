"""The rule judge's pure extraction functions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmms_eval_tasks.judges import JudgeRequest, get_judge
from lmms_eval_tasks.judges.rules import extract_number, extract_option_letter, extract_yes_no


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", "yes"),
        ("yes.", "yes"),
        ("YES, the line is longer.", "yes"),
        ("No, it is not.", "no"),
        ("no", "no"),
        ("Yes and no", None),  # both words: undecided (VLMEvalKit "Unknown")
        ("The answer is not clear", None),
        ("yesterday nobody came", None),  # whole words only
        ("It's a 'yes'!", "yes"),  # punctuation becomes spaces
        ("", None),
    ],
)
def test_extract_yes_no_follows_vlmevalkit(text: str, expected: str | None) -> None:
    assert extract_yes_no(text) == expected


@pytest.mark.parametrize(
    ("text", "letters", "expected"),
    [
        ("B", "ABCD", "B"),
        ("(C)", "ABCD", "C"),
        ("D.", "ABCD", "D"),
        ("The answer is B.", "ABCD", "B"),
        ("Answer: (A) a red car", "ABCD", "A"),
        ("B. a cat on the mat", "ABCD", "B"),
        ("A cat is sitting on a mat.", "ABCD", None),  # article, not option A
        ("I think A is correct", "ABCD", "A"),
        ("A or B", "ABCD", None),  # ambiguous
        ("The answer is E", "ABCD", None),  # not an allowed letter
        ("The answer is E", "ABCDE", "E"),
        ("answer: b", "ABCD", None),  # lower case letters are not options
        ("", "ABCD", None),
    ],
)
def test_extract_option_letter(text: str, letters: str, expected: str | None) -> None:
    assert extract_option_letter(text, letters) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3", "3"),
        ("There are 3 dogs and 2 cats.", "3"),  # the first number
        ("three dogs", "3"),
        ("Twenty-one people", "21"),
        ("2.50 kg", "2.5"),
        ("3.0", "3"),
        ("1,000 people", "1000"),
        ("-4 degrees", "-4"),
        (".5 of it", "0.5"),
        ("the 3rd place, then 7", "7"),  # "3rd" is an ordinal, not a count
        ("zero", "0"),
        ("no numbers here", None),
    ],
)
def test_extract_number(text: str, expected: str | None) -> None:
    assert extract_number(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_extractors_never_raise_on_arbitrary_text(text: str) -> None:
    assert extract_yes_no(text) in {"yes", "no", None}
    assert extract_option_letter(text) in {"A", "B", "C", "D", None}
    number = extract_number(text)
    assert number is None or isinstance(number, str)


def test_non_string_input_gives_none() -> None:
    assert extract_yes_no(None) is None  # type: ignore[arg-type]
    assert extract_option_letter(3) is None  # type: ignore[arg-type]
    assert extract_number(None) is None  # type: ignore[arg-type]


def test_rule_judge_replies_rule_reply_per_repeat_and_marks_undecided_unjudged() -> None:
    judge = get_judge("rule")
    requests = [
        JudgeRequest("p0", rule_reply="correct"),
        JudgeRequest("p1"),
        JudgeRequest("p2", rule_reply=""),
    ]
    replies = judge.judge(requests, repeats=3)
    assert [[reply.text for reply in row] for row in replies] == [["correct"] * 3, [None] * 3, [""] * 3]
    assert [reply.repeat for reply in replies[0]] == [0, 1, 2]
    assert replies[1][0].error == "rule judge could not decide"
    assert replies[0][0].error is None and not replies[0][0].cached
    usage = judge.usage()
    assert usage["unjudged"] == 3 and usage["calls"] == 0 and usage["estimated_cost_usd"] == 0.0
    assert judge.describe()["model"] == "rule-based" and judge.kind == "rule"
