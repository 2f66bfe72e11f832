"""DARE prompts against the spec file: every text the spec quotes must appear in ours byte for byte.

The spec (paper appendix A.1) quotes prompts with "..." where the paper elides text; each quoted text is
split at "..." and its pieces must appear in order in our prompt, anchored at the start (end) unless the
quote starts (ends) with "...". The spec is read from disk, never retyped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lmms_eval_tasks.tasks.dare.prompts import MULTI_PROMPTS, SINGLE_PROMPTS, build_prompt

SPEC = Path(__file__).resolve().parents[1] / "data" / "spec" / "dare.md"

# The spec's quoted prompt texts in order of appearance -> the (setup, format, prompt) they belong to.
QUOTE_OWNERS = [
    ("single", "gen", 1),
    ("single", "gen", 2),
    ("single", "gen", 3),
    ("single", "json", 1),
    ("single", "json", 2),
    ("single", "json", 3),
    ("multi", "gen", 1),
    ("multi", "gen", 2),
    ("multi", "gen", 3),
    ("multi", "json", 1),
    ("multi", "json", 2),
    ("multi", "json", 3),
    ("single", "inv", 1),
    ("single", "csv", 1),
    ("single", "word", 1),
]
QUESTION_BLOCK = ["Question: {question}", "Options:", "A. {A}", "D. {D}", "Answer:", "Answers:"]


def _spec_quotes() -> list[str]:
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("## Prompts") : text.index("## Output formats")]
    return re.findall(r"`([^`]*)`", section)


def _ours(setup: str, answer_format: str, prompt: int) -> str:
    table = MULTI_PROMPTS if setup == "multi" else SINGLE_PROMPTS
    return table[(answer_format, prompt)].format(subject="{subject}")


def _matches_with_elisions(quote: str, text: str) -> bool:
    pieces = [piece.strip() for piece in quote.split("...")]
    position = 0
    for number, piece in enumerate(pieces):
        if not piece:
            continue
        found = text.find(piece, position)
        if found < 0 or (number == 0 and found != 0):
            return False
        position = found + len(piece)
    return not pieces[-1] or position == len(text)


def test_the_spec_quotes_what_this_test_expects() -> None:
    quotes = _spec_quotes()
    assert len(quotes) == len(QUOTE_OWNERS) + len(QUESTION_BLOCK)
    assert quotes[len(QUOTE_OWNERS) :] == QUESTION_BLOCK


@pytest.mark.parametrize("number", range(len(QUOTE_OWNERS)))
def test_every_spec_prompt_appears_byte_for_byte(number: int) -> None:
    quote = _spec_quotes()[number]
    owner = QUOTE_OWNERS[number]
    if owner[:2] == ("single", "json"):
        # The spec gives these as endings after "the same three openings".
        quote = "... " + quote
    ours = _ours(*owner)
    assert _matches_with_elisions(quote, ours), f"spec: {quote!r}\nours: {ours!r}"


def test_unelided_spec_prompts_are_ours_exactly() -> None:
    quotes = _spec_quotes()
    exact = {
        owner: quote
        for owner, quote in zip(QUOTE_OWNERS, quotes, strict=False)
        if "..." not in quote and owner[:2] != ("single", "json")
    }
    assert set(exact) == {
        ("single", "gen", 1),
        ("single", "gen", 2),
        ("single", "gen", 3),
        ("single", "inv", 1),
    }
    for owner, quote in exact.items():
        assert _ours(*owner) == quote
    # Out-Log uses the Out-Gen texts.
    for prompt in (1, 2, 3):
        assert SINGLE_PROMPTS[("log", prompt)] == SINGLE_PROMPTS[("gen", prompt)]
        assert MULTI_PROMPTS[("log", prompt)] == MULTI_PROMPTS[("gen", prompt)]


def test_json_prompts_reuse_the_openings_of_the_gen_prompts() -> None:
    # Spec: single-correct Out-JSON has "the same three openings" as Out-Gen.
    for prompt in (1, 2, 3):
        gen, json_prompt = _ours("single", "gen", prompt), _ours("single", "json", prompt)
        opening = gen[: gen.index(". ") + 2]
        assert json_prompt.startswith(opening), prompt


DOC = {"id": "q", "question": "How many?", "A": "one", "B": "two", "C": "three", "D": "four"}
SUBJECTS = {
    "count": "conditional counting",
    "order": "ordering",
    "vcr": "visual commonsense reasoning",
    "culture": "culture",
    "trick": "trick questions",
}


@pytest.mark.parametrize("category", sorted(SUBJECTS))
@pytest.mark.parametrize(("setup", "answer_label"), [("single", "Answer:"), ("multi", "Answers:")])
def test_question_block_layout(category: str, setup: str, answer_label: str) -> None:
    text = build_prompt({**DOC, "category": category}, setup, "gen", 1)
    head, *block = text.split("\n")
    assert head == _ours(setup, "gen", 1).replace("{subject}", SUBJECTS[category])
    assert block == [
        "Question: How many?",
        "Options:",
        "A. one",
        "B. two",
        "C. three",
        "D. four",
        answer_label,
    ]
