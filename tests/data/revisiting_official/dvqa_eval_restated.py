"""Restatement (not a copy) of eval_script/DVQA_eval.py, KevinLuJian/MLLM_supplemental; see README.md.

Test data only: prints the official script's lines for a JSON-lines answer file (``--path``).
"""

import argparse
import json
import re

from num2words_en_restated import num2words

SUPERSCRIPT = "⁰¹²³⁴⁵⁶⁷⁸⁹"


def squeeze(text, prediction):
    # Script: spaces and every "." deleted, lower case; a str.isdigit() string goes through num2words; for a
    # prediction num2words cannot read, "10" followed by superscript digits is taken as a power of ten.
    text = text.replace(" ", "").lower().replace(".", "")
    if not text.isdigit():
        return text
    try:
        return num2words(text)
    except ValueError:
        if not prediction or not re.fullmatch(f"10[{SUPERSCRIPT}]+", text):
            raise
        exponent = int("".join(str(SUPERSCRIPT.index(char)) for char in text[2:]))
        return num2words(str(10**exponent))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path")
    path = parser.parse_args().path
    rows = [json.loads(line) for line in open(path)]
    tallies = {}
    right_total = 0
    for row in rows:
        good = squeeze(row["predicted_answer"], True) == squeeze(row["labeled_answer"], False)
        right, seen = tallies.get(row["template_id"], (0, 0))
        tallies[row["template_id"]] = (right + good, seen + 1)
        right_total += good
    summed = 0
    for name, (right, seen) in tallies.items():
        print(
            f"\nquestion type: {name}: accuracy: {right / seen} | total {name} question = {seen}, "
            f"correct = {right}"
        )
        summed += right / seen
    print(f"micro accuracy: {right_total / len(rows):.4f}")
    print(f"macro accuracy: {summed / len(tallies):.4f}")


if __name__ == "__main__":
    main()
