"""Time HallusionBench scoring of 1129 records with supplied verdicts (3 judge repeats, diagnosis included).

The records are synthetic but shaped like the benchmark: the real per-subcategory visual_input counts
(VD 591 = 277 original + 314 edited; VS 538 = 178 no-image + 170 original + 190 edited), 455 question pairs.
Reference run in the same process: the same records with a single repeat. Last line: RESULT seconds=<x>.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

# (category, subcategory) -> visual_input counts, from the official HallusionBench.json (1129 questions)
VISUAL_INPUT_COUNTS: dict[tuple[str, str], dict[str, int]] = {
    ("VD", "figure"): {"1": 39, "2": 41},
    ("VD", "illusion"): {"1": 72, "2": 72},
    ("VD", "math"): {"1": 54, "2": 54},
    ("VD", "ocr"): {"1": 43, "2": 46},
    ("VD", "video"): {"1": 69, "2": 101},
    ("VS", "chart"): {"0": 76, "1": 68, "2": 62},
    ("VS", "map"): {"0": 32, "1": 32, "2": 32},
    ("VS", "ocr"): {"0": 27, "1": 27, "2": 27},
    ("VS", "table"): {"0": 43, "1": 43, "2": 69},
}
QUESTIONS_PER_SET = 3


def _pairs_for(category: str, counts: dict[str, int]) -> list[list[str]]:
    """Per question pair, the visual_input of each member in figure order (figure_id = position)."""
    if category == "VD":
        pairs = [["1"] for _ in range(counts["1"])]
        edited = counts["2"]
    else:
        pairs = [["0"] for _ in range(counts["0"])]
        for position in range(len(pairs)):  # figure 1: the original image, or an edited one when none is left
            pairs[position].append("1" if position < counts["1"] else "2")
        edited = counts["2"] - (counts["0"] - counts["1"])
    position = 0
    while edited > 0:
        pairs[position % len(pairs)].append("2")
        position += 1
        edited -= 1
    return pairs


def synthetic_records(rng: random.Random, repeats: int = 1, accuracy: float = 0.6) -> list[dict[str, Any]]:
    """1129 well-formed records with random gt answers, predictions, verdicts and consistency flags."""
    records = []
    for (category, subcategory), counts in VISUAL_INPUT_COUNTS.items():
        for pair_number, members in enumerate(_pairs_for(category, counts)):
            set_id, question_id = divmod(pair_number, QUESTIONS_PER_SET)
            for figure_id, visual_input in enumerate(members):
                gt_answer = "1" if rng.random() < 484 / 1129 else "0"
                verdicts = [
                    rng.choices("102", weights=(accuracy, 1 - accuracy - 0.05, 0.05))[0]
                    for _ in range(repeats)
                ]
                sames = [rng.random() < 0.5 for _ in range(repeats)]
                records.append(
                    {
                        "category": category,
                        "subcategory": subcategory,
                        "visual_input": visual_input,
                        "set_id": str(set_id),
                        "figure_id": str(figure_id),
                        "sample_note": "synthetic",
                        "question_id": str(question_id),
                        "question": f"Synthetic question {pair_number}?",
                        "gt_answer_details": "Synthetic reference.",
                        "gt_answer": gt_answer,
                        "filename": None
                        if visual_input == "0"
                        else f"./{category}/{subcategory}/{set_id}_{figure_id}.png",
                        "prediction": rng.choice(["Yes.", "No.", "I cannot tell."]),
                        "judge_verdict": verdicts if repeats > 1 else verdicts[0],
                        "judge_same": sames if repeats > 1 else sames[0],
                    }
                )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds; the best is reported")
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    options = parser.parse_args()
    if options.quick:
        options.rounds = 1

    from lmms_eval_tasks.tasks.hallusionbench.scoring import score

    records = synthetic_records(random.Random(options.seed), repeats=options.repeats)
    single = synthetic_records(random.Random(options.seed), repeats=1)
    assert len(records) == 1129, len(records)

    def best_time(rows: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
        best, result = float("inf"), {}
        for _ in range(options.rounds):
            start = time.perf_counter()
            result = score(rows)[0]
            best = min(best, time.perf_counter() - start)
        return best, result

    reference_seconds, reference = best_time(single)
    seconds, result = best_time(records)
    print(
        f"records={len(records)} seed={options.seed} pairs={result['question_pairs']} "
        f"figures={result['figures']}"
    )
    print(
        f"reference (1 repeat): {reference_seconds:.4f} s  aAcc={reference['aAcc']:.4f} "
        f"qAcc={reference['qAcc']:.4f}"
    )
    print(
        f"{options.repeats} repeats:           {seconds:.4f} s  aAcc={result['aAcc']:.4f} "
        f"(std {result['aAcc_std']:.4f}) overall={result['overall']:.4f}"
    )
    print(
        f"RESULT seconds={seconds:.4f} reference_seconds={reference_seconds:.4f} records={len(records)} "
        f"repeats={options.repeats} under_one_second={int(seconds < 1.0)}"
    )


if __name__ == "__main__":
    main()
