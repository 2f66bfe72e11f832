"""Restatement (not a copy) of eval_script/TallyQA_eval.py with its normalize_answer.py,
KevinLuJian/MLLM_supplemental; see README.md. Test data only: prints the official script's lines."""

import argparse
import json

WORDS = dict(
    zero=0,
    none=0,
    no=0,
    one=1,
    two=2,
    three=3,
    four=4,
    five=5,
    six=6,
    seven=7,
    eight=8,
    nine=9,
    ten=10,
    eleven=11,
    twelve=12,
    thirteen=13,
    fourteen=14,
    fifteen=15,
)


def read(path):
    # normalize_answer.py: "." and " " deleted, lower case; str.isnumeric() -> int; a listed word -> its
    # number; anything else stays a string (it then never equals the label and is left out of the error).
    rows = [json.loads(line) for line in open(path)]
    for row in rows:
        text = row["predicted_answer"].replace(".", "").replace(" ", "").lower()
        if text.isnumeric():
            row["predicted_answer"] = int(text)
        elif text in WORDS:
            row["predicted_answer"] = WORDS[text]
    return rows


def split_name(flag):
    return "Simple Counting" if flag else "Complex Counting"


def micro(rows):
    tallies, squared = {}, {}
    for row in rows:
        answer, label, flag = row["predicted_answer"], row["labeled_answer"], row["issimple"]
        right, seen = tallies.get(flag, (0, 0))
        tallies[flag] = (right + (answer == label), seen + 1)
        squared.setdefault(flag, [])
        if isinstance(answer, (int, float)):
            squared[flag].append((float(min(answer, 15)) - float(label)) ** 2)
    for flag, (right, seen) in tallies.items():
        print(
            f"Question Type: {split_name(flag)}, Micro accuracy: {right / seen}, "
            f"total {flag} questions = {seen}, correct = {right}"
        )
    print("")
    for flag, errors in squared.items():
        # printed as "RMSE" by the script, but no square root is taken: a mean squared error
        print(f"question type: {split_name(flag)}: RMSE: {sum(errors) / len(errors)}")


def macro(rows):
    buckets = {}
    for row in rows:
        label = row["labeled_answer"]
        key = str(label) if label <= 3 else "above"
        cell = buckets.setdefault(row["issimple"], {}).setdefault(key, [0, 0])
        cell[0] += row["predicted_answer"] == label
        cell[1] += 1
    for flag, cells in buckets.items():
        print(f"Question Type: {split_name(flag)}")
        total = 0
        for key, (right, seen) in cells.items():
            total += right / seen
            print(f"Answer: {key}, Accuracy: {right / seen:.4f}, Total: {seen}, Correct: {right}")
        print(f"Macro Accuracy: {total / len(cells):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--path")
    path = parser.parse_args().path
    print("MICRO")
    micro(read(path))
    print("MACRO")
    macro(read(path))
