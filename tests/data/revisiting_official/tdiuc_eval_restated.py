"""Restatement (not a copy) of eval_script/TDIUC_eval.py, KevinLuJian/MLLM_supplemental; see README.md.

Test data only: prints the official script's lines for a JSON-lines answer file (``--path``).
"""

import argparse
import json

from nltk.corpus import wordnet
from num2words_en_restated import num2words


def share_synset(first, second):
    # Script: both words must have synsets, and some synset of one equals some synset of the other.
    left, right = wordnet.synsets(first), wordnet.synsets(second)
    return bool(left) and bool(right) and any(a == b for a in left for b in right)


def squeeze(text):
    # Script: spaces deleted, lower case; a str.isdigit() string becomes num2words of it.
    text = text.replace(" ", "").lower()
    return num2words(text) if text.isdigit() else text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path")
    path = parser.parse_args().path
    per_type = {}
    right_total = 0
    rows = [json.loads(line) for line in open(path)]
    for row in rows:
        label, answer = squeeze(row["labeled_answer"]), squeeze(row["predicted_answer"])
        good = answer == label or share_synset(answer, label)
        right, seen = per_type.get(row["question_type"], (0, 0))
        per_type[row["question_type"]] = (right + good, seen + 1)
        right_total += good
    summed = 0
    for name, (right, seen) in per_type.items():
        summed += right / seen
        print(f"Question type: {name}: accuracy: {right / seen:.4f}, questions = {seen}, correct = {right}")
    print(
        f"Micro accuracy: {right_total / len(rows):.4f}, total question = {len(rows)}, "
        f"correct = {right_total}"
    )
    print(f"Macro accuracy: {summed / 12:.4f}")  # the script divides by 12 whatever the types present


if __name__ == "__main__":
    main()
