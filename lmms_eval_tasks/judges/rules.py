"""Pure extraction rules of the offline rule-based judge: yes/no, option letters, numbers (None when
undecided; no I/O, no exceptions on odd input)."""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

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
    return found[0] if len(set(found)) == 1 else None


# words that follow an option letter but not the article "a" ("A is correct", "A or B")
_NOT_AFTER_ARTICLE = frozenset(
    "is or and was seems would should because as since for to looks appears fits matches but".split()
)


@lru_cache(maxsize=32)
def _option_patterns(letters: str) -> tuple[re.Pattern[str], ...]:
    """The compiled rules of ``extract_option_letter`` for one letter set; possessive whitespace runs, each
    owned by one optional part, keep it linear (three adjacent quantifiers made a reply of spaces cubic)."""
    letter_class = "[" + re.escape(letters) + "]"
    return (
        re.compile(rf"[\(\[]?\s*+({letter_class})\s*+[\)\]]?[.:]?"),
        re.compile(
            rf"(?:answer|option|choice)\s*+(?:(?:is|would be|:)\s*+)?(?:[:\-]\s*+)?[\(\[]?"
            rf"({letter_class})(?![A-Za-z0-9])",
            flags=re.IGNORECASE,
        ),
        re.compile(rf"[\(\[]({letter_class})[\)\]]"),
        re.compile(rf"({letter_class})\s*+[.):]\s"),
    )


@lru_cache(maxsize=64)
def _candidate_pattern(letters: str) -> re.Pattern[str]:
    """A standalone upper-case letter of ``letters``, except an article "A" (followed by a lower-case word
    not in _NOT_AFTER_ARTICLE), decided inside the regex so long replies cost no Python step per letter."""
    parts = []
    others = "".join(letter for letter in letters if letter != "A")
    if others:
        parts.append("[" + re.escape(others) + "]")
    if "A" in letters:
        exempt = "|".join(sorted(_NOT_AFTER_ARTICLE))
        parts.append(rf"A(?!\s++(?!(?:{exempt})(?![a-z]))[a-z])")
    return re.compile(rf"(?<![A-Za-z0-9'’])({'|'.join(parts)})(?![A-Za-z0-9'’])")


def extract_option_letter(text: str, letters: str = "ABCD") -> str | None:
    """The single option letter a reply commits to ("B", "(B) cat", "Answer: B"); None if none or ambiguous.
    Upper case only, so the article "a" is never option A, nor "A" before a lower-case word ("A cat sits")."""
    if not isinstance(text, str) or not letters:
        return None
    letters = "".join(dict.fromkeys(letters.upper()))
    whole_pattern, explicit_pattern, bracketed_pattern, leading_pattern = _option_patterns(letters)
    stripped = text.strip().strip("*_`'\" \t\n")
    # 1. the whole reply is a letter, possibly wrapped: "B", "(B)", "B.", "[B]"
    whole = whole_pattern.fullmatch(stripped)
    if whole:
        return whole.group(1)
    # 2. an explicit statement: "answer is B", "Answer: (C)", "option D", "correct choice: A"
    explicit = explicit_pattern.findall(text)
    explicit = [letter for letter in explicit if letter in letters]  # IGNORECASE must not admit lower case
    if explicit:
        return _unique(explicit)
    # 3. bracketed letters "(B)" / "[B]" or a letter that opens the reply: "B. cat", "C) dog", "D: fish"
    bracketed = bracketed_pattern.findall(text)
    if bracketed:
        return _unique(bracketed)
    leading = leading_pattern.match(stripped + " ")
    if leading:
        return leading.group(1)
    # 4. standalone upper-case letter tokens, ignoring an article "A" that starts a phrase: the first one
    # decides unless a different letter stands alone later (ambiguous)
    first = _candidate_pattern(letters).search(text)
    if first is None:
        return None
    others = letters.replace(first.group(1), "")
    if others and _candidate_pattern(others).search(text, first.end()):
        return None
    return first.group(1)


_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUES = {word: value for value, word in enumerate(_UNITS)}
_WORD_VALUES.update({word: 20 + 10 * index for index, word in enumerate(_TENS)})
_WORD_VALUES["hundred"] = 100


def _word_trie(words: list[str]) -> str:
    """A regex matching exactly ``words``, branching one character at a time: an alternation of 30 words
    retried at every position made number extraction cost ~0.5 ms per kB of letters."""
    tree: dict = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def render(node: dict) -> str:
        branches = [re.escape(char) + render(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        ends = "" in node
        body = branches[0] if len(branches) == 1 and not ends else "(?:" + "|".join(branches) + ")"
        return f"{body}?" if ends else body

    return render(tree)


_NUMBER = re.compile(
    # A one-character lookahead first (a number starts with a sign, ".", a digit or a number word's initial),
    # so most positions are rejected by one test instead of by both alternatives.
    r"(?=[-+−.\deEfFhHnNoOsStTzZ])(?:"
    # Possessive digit runs: a shorter run is followed by a digit, which the lookahead rejects anyway.
    r"(?P<digits>(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d++)(?:\.\d++)?(?![\w])|(?<![\w.])[-+−]?\.\d++(?![\w]))"
    rf"|(?P<word>\b(?:{_word_trie(_TENS)}(?:[\s-]{_word_trie(_UNITS[1:10])})?\b"
    rf"|{_word_trie([*_UNITS, 'hundred'])}\b)))",
    flags=re.IGNORECASE,
)


def _normalise_literal(literal: str) -> str:
    """A digit literal ("-007.50", "1,000", ".5") in canonical form ("-7.5", "1000", "0.5"), exactly: on the
    text, not via Decimal/int (no rounding to 28 digits, no int-to-str limit on 100,000 digits; linear)."""
    literal = literal.replace(",", "").replace("−", "-")
    if not literal.isascii():  # \d also matches other scripts' digits ("٣"): write them in ASCII
        literal = "".join(str(unicodedata.decimal(char)) if char.isdecimal() else char for char in literal)
    sign = "-" if literal.startswith("-") else ""
    whole, _, fraction = literal.lstrip("+-").partition(".")
    whole = whole.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    if whole == "0" and not fraction:
        return "0"
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"


def extract_number(text: str) -> str | None:
    """The first number in the reply, normalised: "3", "2.5", "-4", "1000"; number words up to ninety-nine.
    Digits followed by letters ("3rd", "4k", "v2") are not numbers; thousands separators are removed."""
    if not isinstance(text, str):
        return None
    for match in _NUMBER.finditer(text):
        if match.group("digits"):
            return _normalise_literal(match.group("digits"))
        words = re.split(r"[\s-]+", match.group("word").lower())
        return str(sum(_WORD_VALUES[word] for word in words))
    return None
