"""Time scoring 30,000 TDIUC records (real WordNet synonym matching) and 40,000 TallyQA records.

Synthetic records shaped like the slim subsets: TDIUC over the 12 question types with an open vocabulary of
answers (~20 % exact, the rest synonyms, plurals, multi-word answers, unrelated words and free text, so
most predictions reach WordNet; lookups are cached per distinct string), TallyQA counts 0-15 with digits,
number words, decimals and free text. WordNet is loaded once before timing (a one-time cost per process,
reported separately as wordnet_load_seconds). Reference in the same process: the same records scored a
second time (warm cache). Last line: RESULT seconds=<slower of the two cold scorings> ...
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

TDIUC_ANSWERS = [
    "red", "blue", "white", "telephone", "dog", "cat", "sofa", "teddy bear", "cell phone", "2", "3", "10",
    "doesnotapply", "yes", "no", "tennis", "baseball", "bicycle", "hot dog", "kitchen", "bathroom", "happy",
    "pizza", "sandwich", "umbrella", "skateboarding", "surfing", "left", "right", "wood",
]  # fmt: skip
TDIUC_VARIANTS = [
    "phone", "dogs", "couch", "teddy", "mobile phone", "two", "three", "ten", "does not apply", "bike",
    "frankfurter", "sad", "pizzas", "skateboard", "surf", "wooden", "grey", "kitty", "bathrooms",
    "sandwiches",
]  # fmt: skip


def tdiuc_records(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` TDIUC records; about a third of the predictions are distinct free-text strings."""
    from lmms_eval_tasks.tasks.tdiuc.scoring import QUESTION_TYPES

    records = []
    for index in range(count):
        label = rng.choice(TDIUC_ANSWERS)
        draw = rng.random()
        if draw < 0.2:
            prediction = label
        elif draw < 0.6:
            prediction = rng.choice(TDIUC_VARIANTS + TDIUC_ANSWERS)
        else:
            prediction = (
                f"{rng.choice(TDIUC_VARIANTS)} {rng.choice(['thing', 'one', 'area', 'color'])}{index % 97}"
            )
        records.append(
            {
                "question_id": index,
                "question_type": QUESTION_TYPES[index % len(QUESTION_TYPES)],
                "labeled_answer": label,
                "prediction": prediction,
            }
        )
    return records


def tallyqa_records(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` TallyQA records with mixed answer forms."""
    words = "zero one two three four five six seven eight nine ten eleven twelve".split()
    records = []
    for index in range(count):
        answer = rng.choice([0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 9, 12])
        prediction = rng.choice(
            [
                str(answer),
                words[answer].capitalize(),
                f"{answer}.",
                "2.5",
                "none",
                "many",
                "twenty-one",
                "3 dogs",
            ]
        )
        records.append(
            {"question_id": index, "answer": answer, "issimple": rng.random() < 0.6, "prediction": prediction}
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tdiuc", type=int, default=30_000)
    parser.add_argument("--tallyqa", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    args = parser.parse_args()
    if args.quick:
        args.tdiuc, args.tallyqa = 300, 400
    from lmms_eval_tasks.tasks.tallyqa import scoring as tallyqa
    from lmms_eval_tasks.tasks.tdiuc import scoring as tdiuc

    rng = random.Random(args.seed)
    tdiuc_data = tdiuc_records(args.tdiuc, rng)
    tallyqa_data = tallyqa_records(args.tallyqa, rng)
    started = time.perf_counter()
    tdiuc.wordnet()
    tdiuc.synset_names("dog")
    wordnet_load = time.perf_counter() - started

    started = time.perf_counter()
    tdiuc_metrics = tdiuc.score(tdiuc_data)[0]
    tdiuc_seconds = time.perf_counter() - started
    started = time.perf_counter()
    tdiuc.score(tdiuc_data)[0]
    tdiuc_warm = time.perf_counter() - started
    distinct = tdiuc.synset_names.cache_info().currsize

    started = time.perf_counter()
    tallyqa_metrics = tallyqa.score(tallyqa_data)[0]
    tallyqa_seconds = time.perf_counter() - started

    print(
        f"TDIUC: {args.tdiuc} records in {tdiuc_seconds:.2f} s (warm cache {tdiuc_warm:.2f} s; "
        f"{distinct} distinct WordNet lookups; micro {tdiuc_metrics['micro_accuracy']:.2f})"
    )
    print(
        f"TallyQA: {args.tallyqa} records in {tallyqa_seconds:.2f} s "
        f"(micro {tallyqa_metrics['micro_accuracy']:.2f})"
    )
    print(f"WordNet load (once per process, not timed above): {wordnet_load:.2f} s")
    print(
        f"RESULT seconds={max(tdiuc_seconds, tallyqa_seconds):.3f} tdiuc_seconds={tdiuc_seconds:.3f} "
        f"tdiuc_warm_seconds={tdiuc_warm:.3f} tallyqa_seconds={tallyqa_seconds:.3f} "
        f"wordnet_load_seconds={wordnet_load:.3f} tdiuc_with_load_seconds={tdiuc_seconds + wordnet_load:.3f}"
    )


if __name__ == "__main__":
    main()
