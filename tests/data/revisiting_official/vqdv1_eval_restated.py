"""Restatement (not a copy) of eval_script/VQDv1_eval.py, KevinLuJian/MLLM_supplemental; see README.md.

Test data only: prints the official script's lines for a JSON-lines answer file.
"""

import argparse
import json
import re


def predicted_boxes(text, width, height):
    # Script: every non-greedy "[...]" (no newline inside); every number-looking run inside; exactly 4 kept;
    # all four < 1 -> multiplied by the image size; read as [x1, y1, x2, y2].
    boxes = []
    for inside in re.findall(r"\[(.*?)\]", text):
        numbers = [float(token) for token in re.findall(r"[-+]?\d*\.\d+|\d+", inside)]
        if len(numbers) != 4:
            continue
        if max(numbers) < 1:
            numbers = [numbers[0] * width, numbers[1] * height, numbers[2] * width, numbers[3] * height]
        boxes.append(numbers)
    return boxes


def labelled_boxes(value):
    # Script: [[]] means none; [x, y, w, h] becomes [x, y, x + w, y + h].
    if value == [[]]:
        return []
    return [[x, y, x + w, y + h] for x, y, w, h in value]


def overlap(a, b):
    # Script: raw area products, no guard against an empty union (a ZeroDivisionError, as in the script).
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


def query_score(predicted, labelled):
    if not predicted or not labelled:
        return 1 if not predicted and not labelled else 0
    left = list(predicted)
    hits = 0
    for target in labelled:
        # Script: the first strictly highest IoU, starting from 0; a hit at >= 0.5 removes that prediction.
        best, where = 0, -1
        for position, box in enumerate(left):
            value = overlap(target, box)
            if value > best:
                best, where = value, position
        if best >= 0.5 and where != -1:
            left.pop(where)
            hits += 1
    false_positives = len(left)
    false_negatives = len(labelled)  # the script's FN: every ground-truth box
    precision = hits / (hits + false_positives) if hits + false_positives else 0
    recall = hits / (hits + false_negatives) if hits + false_negatives else 0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--path")
    arguments = parser.parse_args()
    with open(arguments.path) as handle:
        rows = [json.loads(line) for line in handle]
    per_count = {}
    every = []
    for row in rows:
        predicted = predicted_boxes(row["predicted_answer"], row["width"], row["height"])
        labelled = labelled_boxes(row["labeled_answer"])
        score = query_score(predicted, labelled)
        per_count.setdefault(len(labelled), []).append(score)
        every.append(score)
    total = 0
    pooled, pooled_count = 0, 0
    for count in sorted(per_count):
        scores = per_count[count]
        if count < 5:
            print(f"Number of bounding boxes: {count}, Accuracy: {sum(scores) / len(scores)}")
            total += sum(scores) / len(scores)
        else:
            pooled += sum(scores)
            pooled_count += len(scores)
    # Script: after the loop it adds the mean of the last (largest) count once more, then divides by 6.
    last = per_count[max(per_count)]
    total += sum(last) / len(last)
    print(f"Number of bounding boxes above 4: {pooled_count}, Accuracy: {pooled / pooled_count}")
    print(f"Micro Accuracy: {total / 6}")
    print(f"Macro Accuracy: {sum(every) / len(every)}")


if __name__ == "__main__":
    main()
