"""Pure extraction rules used by the offline rule-based judge: yes/no, option letters, numbers.

No I/O and no exceptions on odd input: every function returns None when it cannot decide.
"""

from __future__ import annotations

import re
import string
from decimal import Decimal, InvalidOperation

_PUNCTUATION_TO_SPACE = str.maketrans({character: " " for character in string.punctuation})


def extract_yes_no(text: str) -> str | None:
    """VLMEvalKit's yes/no rule: "yes" if the word yes occurs and no does not, "no" if reversed, else None."""
    if not isinstance(text, str):
        return None
    words = text.lower().translate(_PUNCTUATION_TO_SPACE).split()
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes and not has_no:
        return "yes"
    if has_no and not has_yes:
        return "no"
    return None


def _unique(found: list[str]) -> str | None:
    distinct = set(found)
    return found[0] if len(distinct) == 1 else None


# words that follow an option letter but not the article "a" ("A is correct", "A or B")
_NOT_AFTER_ARTICLE = {
    "is",
    "or",
    "and",
    "was",
    "seems",
    "would",
    "should",
    "because",
    "as",
    "since",
    "for",
    "to",
    "looks",
    "appears",
    "fits",
    "matches",
    "but",
}


def extract_option_letter(text: str, letters: str = "ABCD") -> str | None:
    """The single option letter a reply commits to ("B", "(B) cat", "Answer: B"); None if none or ambiguous.

    Letters count only in upper case, so the article "a" never reads as option A; an "A" followed by a
    lower-case noun-like word ("A cat sits") is an article too.
    """
    if not isinstance(text, str) or not letters:
        return None
    letters = "".join(dict.fromkeys(letters.upper()))
    letter_class = "[" + re.escape(letters) + "]"
    stripped = text.strip().strip("*_`'\" \t\n")
    # 1. the whole reply is a letter, possibly wrapped: "B", "(B)", "B.", "[B]"
    whole = re.fullmatch(rf"[\(\[]?\s*({letter_class})\s*[\)\]]?[.:]?", stripped)
    if whole:
        return whole.group(1)
    # 2. an explicit statement: "answer is B", "Answer: (C)", "option D", "correct choice: A"
    explicit = re.findall(
        rf"(?:answer|option|choice)\s*(?:is|would be|:)?\s*[:\-]?\s*[\(\[]?({letter_class})(?![A-Za-z0-9])",
        text,
        flags=re.IGNORECASE,
    )
    explicit = [letter for letter in explicit if letter in letters]  # IGNORECASE must not admit lower case
    if explicit:
        return _unique(explicit)
    # 3. bracketed letters "(B)" / "[B]" or a letter that opens the reply: "B. cat", "C) dog", "D: fish"
    bracketed = re.findall(rf"[\(\[]({letter_class})[\)\]]", text)
    if bracketed:
        return _unique(bracketed)
    leading = re.match(rf"({letter_class})\s*[.):]\s", stripped + " ")
    if leading:
        return leading.group(1)
    # 4. standalone upper-case letter tokens, ignoring an article "A" that starts a phrase
    candidates = []
    for match in re.finditer(rf"(?<![A-Za-z0-9'’])({letter_class})(?![A-Za-z0-9'’])", text):
        letter = match.group(1)
        following = re.match(r"\s+([a-z]+)", text[match.end() :])
        if letter == "A" and following and following.group(1) not in _NOT_AFTER_ARTICLE:
            continue
        candidates.append(letter)
    return _unique(candidates) if candidates else None


_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUES = {word: value for value, word in enumerate(_UNITS)}
_WORD_VALUES.update({word: 20 + 10 * index for index, word in enumerate(_TENS)})
_WORD_VALUES["hundred"] = 100
_NUMBER = re.compile(
    r"(?P<digits>(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])|(?<![\w.])[-+−]?\.\d+(?![\w]))"
    r"|(?P<word>\b(?:" + "|".join(_TENS) + r")(?:[\s-](?:" + "|".join(_UNITS[1:10]) + r"))?\b"
    r"|\b(?:" + "|".join(_UNITS) + r"|hundred)\b)",
    flags=re.IGNORECASE,
)


def _normalise_decimal(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def extract_number(text: str) -> str | None:
    """The first number in the reply, normalised: "3", "2.5", "-4", "1000"; number words up to ninety-nine.

    Digits followed by letters ("3rd", "4k", "v2") are not numbers; thousands separators are removed.
    """
    if not isinstance(text, str):
        return None
    for match in _NUMBER.finditer(text):
        if match.group("digits"):
            literal = match.group("digits").replace(",", "").replace("−", "-").lstrip("+")
            try:
                return _normalise_decimal(Decimal(literal))
            except InvalidOperation:
                continue
        words = re.split(r"[\s-]+", match.group("word").lower())
        return str(sum(_WORD_VALUES[word] for word in words))
    return None


__all__ = ["extract_number", "extract_option_letter", "extract_yes_no"]
