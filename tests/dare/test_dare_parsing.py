"""DARE answer extraction: every output format against hostile model outputs, plus property tests."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmms_eval_tasks.tasks.dare.scoring import (
    FORMATS,
    parse_csv_answer,
    parse_generated,
    parse_inverse_answer,
    parse_json_answer,
    parse_letter_list,
    parse_prediction,
    parse_word_answer,
    parse_yes_no,
)

OPTIONS = {"A": "three", "B": "four", "C": "five", "D": "six"}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("B", "B"),
        ("b", "B"),
        ("B.", "B"),
        ("(B)", "B"),
        ("**B**", "B"),
        ("Answer: (b)", "B"),
        ("The answer is B", "B"),
        ("The answer is b.", "B"),
        ("Final answer: D", "D"),
        ("B: four", "B"),
        ("B) four", "B"),
        ("a) three", "A"),
        ("The answer is (C) five", "C"),
        ("The correct option is C.", "C"),
        ("```\nC\n```", "C"),
        ("It is B", "B"),  # the paper's single-letter regex, X($)
        ("I think B because it is four", "B"),  # a standalone uppercase letter
        ("Answer: A because there are three", "A"),
        ("four", "B"),  # the output is exactly one option's text
        ("B, B, B", "B"),  # repeated letters are one letter
    ],
)
def test_generated_single_letter(output: str, expected: str) -> None:
    parsed = parse_generated(output, options=OPTIONS)
    assert parsed.status == "ok", parsed
    assert parsed.letters == frozenset(expected)


@pytest.mark.parametrize(
    "output",
    [
        "",
        "   ",
        "the answer is a dog",  # lowercase "a" before a word is the article
        "A cat sits on the mat",  # so is a capital "A" before a lowercase word
        "DVD.",  # the paper's regex X(\.) would read D here; we require a word boundary
        "3 apples",
        "I do not know",
    ],
)
def test_generated_unparsed(output: str) -> None:
    assert parse_generated(output, options=OPTIONS).status == "unparsed"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("A, C", "AC"),
        ("A, C, D.", "ACD"),
        ("A and C", "AC"),
        ("(A) and (C)", "AC"),
        ("a, c", "AC"),
        ("The correct options are A and D.", "AD"),
        ("Answers: B, D", "BD"),
        ("The image shows it. B, D are right", "BD"),  # the paper's list regex
        ("A, B, C and D", "ABCD"),
    ],
)
def test_generated_letter_lists(output: str, expected: str) -> None:
    parsed = parse_generated(output)
    assert parsed.status == "ok", parsed
    assert parsed.letters == frozenset(expected)


@pytest.mark.parametrize(
    "output",
    [
        "NONE",
        "none",
        "None of the options are correct.",
        "Answer: NONE",
        "There is no correct answer.",
        "**NONE**",
    ],
)
def test_generated_none(output: str) -> None:
    parsed = parse_generated(output)
    assert parsed.status == "none" and parsed.letters == frozenset(), parsed


def test_generated_several_letters_are_reported_not_guessed() -> None:
    parsed = parse_generated("It could be A: three apples or B: four apples.")
    assert parsed.letters == frozenset("AB")


def test_generated_extra_option_letters() -> None:
    assert parse_generated("E", letters="ABCDE").letters == frozenset("E")
    assert parse_generated("E").status == "unparsed"


@pytest.mark.parametrize(
    ("output", "expected", "status"),
    [
        ('{"answer": "B"}', "B", "ok"),
        ('{"answer": "b"}', "B", "ok"),
        ('```json\n{"answer": "C"}\n```', "C", "ok"),
        ('Sure, here it is: {"answers": ["A", "D"]} Hope it helps.', "AD", "ok"),
        ('{"answer": ["B", "D"]}', "BD", "ok"),
        ('{"Answer": ["B"]}', "B", "ok"),
        ('{"answer": "B. four"}', "B", "ok"),
        ('{"answer": []}', "", "none"),
        ('{"answers": "NONE"}', "", "none"),
        ('{"answer": null}', "", "none"),
        ('{"note": 1} {"answer": "D"}', "D", "ok"),
        ("{'answer': 'B'}", "", "unparsed"),  # single quotes: invalid JSON
        ('{answer: "B"}', "", "unparsed"),  # unquoted key: invalid JSON
        ('{"answer": "B"', "", "unparsed"),  # truncated
        ('{"answer": "four"}', "", "unparsed"),  # option text, not a letter
        ('{"answer": 2}', "", "unparsed"),
        ('["A"]', "", "unparsed"),
        ("B", "", "unparsed"),  # not JSON at all
        ("", "", "unparsed"),
    ],
)
def test_json(output: str, expected: str, status: str) -> None:
    parsed = parse_json_answer(output)
    assert (parsed.status, parsed.letters) == (status, frozenset(expected)), parsed


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("answer,A", "A"),
        ("answer, b", "B"),
        ("Answer;C", "C"),
        ('answer,"C"', "C"),
        ("answer\nD", "D"),
        ("```csv\nanswer\nB\n```", "B"),
        ("Here you go:\nanswer,D\n", "D"),
    ],
)
def test_csv(output: str, expected: str) -> None:
    parsed = parse_csv_answer(output)
    assert parsed.status == "ok" and parsed.letters == frozenset(expected), parsed


@pytest.mark.parametrize("output", ["", "A", "answer,E", "answer,four", "The answer is B"])
def test_csv_unparsed(output: str) -> None:
    assert parse_csv_answer(output).status == "unparsed"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Apple", "A"),
        ("banana", "B"),
        ("Answer: Cherry", "C"),
        ("**Dog** is my answer", "D"),
        ("B", "B"),
    ],
)
def test_word(output: str, expected: str) -> None:
    parsed = parse_word_answer(output)
    assert parsed.status == "ok" and parsed.letters == frozenset(expected), parsed


@pytest.mark.parametrize("output", ["", "Elephant", "123", "!!!"])
def test_word_unparsed(output: str) -> None:
    assert parse_word_answer(output).status == "unparsed"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("A, C, D", "ACD"),
        ("B, C, D.", "BCD"),
        ("A C D", "ACD"),
        ("The incorrect answers are A, B and D", "ABD"),
        ("A", "A"),  # parsed, but not three letters: scored wrong
    ],
)
def test_inverse(output: str, expected: str) -> None:
    parsed = parse_inverse_answer(output)
    assert parsed.status == "ok" and parsed.letters == frozenset(expected), parsed


@pytest.mark.parametrize("output", ["", "NONE", "no idea"])
def test_inverse_unparsed(output: str) -> None:
    assert parse_inverse_answer(output).status == "unparsed"


@pytest.mark.parametrize(
    ("output", "expected", "status"),
    [
        ("B", "B", "ok"),
        ("A, C", "AC", "ok"),
        ("A,C,D", "ACD", "ok"),
        ("NONE", "", "none"),
        ("", "", "none"),
        ("x y", "", "unparsed"),
    ],
)
def test_log_choices(output: str, expected: str, status: str) -> None:
    parsed = parse_letter_list(output)
    assert (parsed.status, parsed.letters) == (status, frozenset(expected))


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Yes", True),
        ("no.", False),
        ("YES, it is", True),
        ("No, that is not correct", False),
        ("maybe", None),
        ("", None),
        ("True", True),
        ("Nope", None),
    ],
)
def test_yes_no(output: str, expected: bool | None) -> None:
    assert parse_yes_no(output) is expected


HOSTILE_LONG = [
    "A, " * 34_000,
    "(" * 100_000,
    "answer is " * 10_000,
    "A" * 100_000,
    " A" * 50_000,
    "A: " * 33_000,
    '{"answer": [' * 8_000,
    '{"answer": ' * 9_000 + '"B"' + "}" * 9_000,
    "a. " * 33_000,
    "NONE " * 20_000,
    "answer: " * 12_000 + "x",
    "\n" * 100_000,
    "A and " * 17_000,
    "answer," * 14_000,
    "```" * 33_000,
    "x" * 100_000 + " The answer is B",
]


@pytest.mark.parametrize("answer_format", [name for name in FORMATS if name != "binary"])
@pytest.mark.parametrize("text", HOSTILE_LONG, ids=lambda text: repr(text[:12]))
def test_long_hostile_outputs_parse_fast(answer_format: str, text: str) -> None:
    started = time.perf_counter()
    parse_prediction(answer_format, text)
    # ~0.25 s on one busy core; a quadratic parser would take minutes on 100 kB.
    assert time.perf_counter() - started < 3.0


def test_long_output_with_answer_at_the_end_is_found() -> None:
    assert parse_generated("x" * 100_000 + " The answer is B").letters == frozenset("B")


_ANSWERISH = st.text(alphabet="ABCDEabcde ,.:;()[]{}\"'\n*#`NOoneANSWERanswer-_01", max_size=300)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), _ANSWERISH), answer_format=st.sampled_from(FORMATS[:-1]))
def test_parsers_never_raise(text: str, answer_format: str) -> None:
    parsed = parse_prediction(answer_format, text, options=OPTIONS)
    assert parsed.status in ("ok", "none", "unparsed")
    assert parsed.letters <= frozenset("ABCD")
    assert (parsed.status == "ok") == bool(parsed.letters)
    assert parse_yes_no(text) in (True, False, None)


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)
@given(unit=_ANSWERISH.filter(bool), answer_format=st.sampled_from(FORMATS[:-1]))
def test_parsers_fast_on_100kb_repetitions(unit: str, answer_format: str) -> None:
    text = (unit * (100_000 // len(unit) + 1))[:100_000]
    started = time.perf_counter()
    parse_prediction(answer_format, text)
    assert time.perf_counter() - started < 3.0


@pytest.mark.parametrize("value", [None, 3, ["B"], {"answer": "B"}])
def test_non_text_predictions_are_unparsed_not_errors(value: object) -> None:
    for answer_format in FORMATS[:-1]:
        assert parse_prediction(answer_format, value).status in ("unparsed", "none")


# --- review regressions: silent mis-parses found by adversarial review ------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        # Oxford comma: was {A, B} (the run stopped at ", and"), a silently wrong multi-correct set.
        ("A, B, and D", "ABD"),
        ("The correct answers are A, B, and D.", "ABD"),
        ("(A), (B), and (C)", "ABC"),
        # A list inside a sentence: was {C} (the paper's single-letter regex saw only the last letter).
        ("Both A and C", "AC"),
        ("I believe both A and D.", "AD"),
    ],
)
def test_generated_lists_with_oxford_comma_or_inside_a_sentence(output: str, expected: str) -> None:
    parsed = parse_generated(output)
    assert parsed.status == "ok" and parsed.letters == frozenset(expected), parsed


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        # "A" before a verb cannot be the article: was unparsed while "B is correct" parsed as B,
        # which biased verbose models' accuracy against questions whose gold answer is A.
        ("A is correct", "A"),
        ("A is correct.", "A"),
        ("A was the right answer", "A"),
        ("B is correct", "B"),
    ],
)
def test_generated_letter_a_before_a_verb_is_the_option(output: str, expected: str) -> None:
    parsed = parse_generated(output)
    assert parsed.status == "ok" and parsed.letters == frozenset(expected), parsed


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        # Was {A, B}: two incorrect letters, so a correct Out-Inv answer (gold C) was scored wrong.
        ("The incorrect answers are A, B, and D.", "ABD"),
        # Was {A, B, C}: three letters, so Out-Inv silently credited D as the model's answer.
        ("A, B, C, and D", "ABCD"),
    ],
)
def test_inverse_oxford_comma(output: str, expected: str) -> None:
    parsed = parse_inverse_answer(output)
    assert parsed.status == "ok" and parsed.letters == frozenset(expected), parsed


def test_csv_several_values_are_several_letters_not_the_first() -> None:
    # Was {A}: "answer,A,B" names two options; a single-correct answer with two letters is wrong.
    assert parse_csv_answer("answer,A,B").letters == frozenset("AB")
    assert parse_csv_answer("answer,A\nreason,B is too small").letters == frozenset("A")


def test_csv_with_quoted_fields() -> None:
    # Valid CSV with quoted fields: was unparsed (the quote after "answer" broke the match).
    assert parse_csv_answer('"answer","B"').letters == frozenset("B")
