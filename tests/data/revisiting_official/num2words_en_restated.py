"""Restatement of how the ``num2words`` package (lang "en") spells a non-negative integer, for the restated
official scripts (they call ``num2words`` on digit strings). Written from num2words' documented merge rules;
test data only."""

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
_TENS = {
    20: "twenty",
    30: "thirty",
    40: "forty",
    50: "fifty",
    60: "sixty",
    70: "seventy",
    80: "eighty",
    90: "ninety",
}
_BIG = [(10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand")]


def _join(left, right):
    # num2words' English merge of two (text, value) pieces
    (left_text, left_value), (right_text, right_value) = left, right
    if left_value == 1 and right_value < 100:
        return right_text, right_value
    if 100 > left_value > right_value:
        return f"{left_text}-{right_text}", left_value + right_value
    if left_value >= 100 > right_value:
        return f"{left_text} and {right_text}", left_value + right_value
    if right_value > left_value:
        return f"{left_text} {right_text}", left_value * right_value
    return f"{left_text}, {right_text}", left_value + right_value


def _piece(value):
    if value < 20:
        return _UNITS[value], value
    if value < 100:
        tens = value - value % 10
        piece = (_TENS[tens], tens)
        return _join(piece, (_UNITS[value % 10], value % 10)) if value % 10 else piece
    if value < 1000:
        piece = _join((_UNITS[value // 100], value // 100), ("hundred", 100))
        return _join(piece, _piece(value % 100)) if value % 100 else piece
    for size, name in _BIG:
        if value >= size:
            piece = _join(_piece(value // size), (name, size))
            return _join(piece, _piece(value % size)) if value % size else piece
    raise OverflowError(value)


def num2words(text):
    """Like ``num2words.num2words(text)`` for a string of decimal digits (num2words reads it with ``Decimal``,
    which accepts any Unicode decimal digits: "３", "٣", "३"); raises for anything else (superscripts)."""
    return _piece(int(text))[0] if text.isdecimal() else _raise(text)


def _raise(text):
    raise ValueError(f"num2words cannot read {text!r}")
