"""Time VRB's scoring of one model's `vrb` group: 71 levels (clean + 14 corruptions x 5) x 16,000 questions.

What the `vrb` group aggregation does with ~1.1 million per-question records: VQA accuracy of every
prediction against its 10 human answers (official normalisation, leave-one-out), accuracy per level,
question type and answer type, and every robustness sub-metric. Then the pool metrics (VRE) for 6 models
x 14 corruptions from their per-level accuracies. Reference in the same process: the host's own
per-question `vqav2_process_results` on the first 16,000 records, extrapolated to all of them.
Synthetic but VQAv2-shaped data (yes/no, number and other answers; annotator disagreement; predictions
with case, punctuation and number-word variants). Last line: RESULT seconds=<x> ...
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from lmms_eval_tasks.corruptions import VRB_PAPER_CORRUPTIONS

QUESTION_TYPES = ("is this", "what", "what is", "is the", "how many", "what color is", "what kind of")
OTHER = ("dog", "cat", "red", "blue", "tennis racket", "pizza", "table", "white", "black", "frisbee")


def _question(rng: random.Random) -> tuple[str, str, list[str]]:
    kind = rng.random()
    if kind < 0.38:
        pool, answer_type, question_type = ["yes", "no"], "yes/no", rng.choice(("is this", "is the"))
    elif kind < 0.5:
        pool, answer_type, question_type = ["0", "1", "2", "3", "4"], "number", "how many"
    else:
        pool, answer_type, question_type = (
            list(OTHER),
            "other",
            rng.choice(("what", "what is", "what kind of")),
        )
    consensus = rng.choice(pool)
    answers = [consensus if rng.random() < 0.7 else rng.choice(pool) for _ in range(10)]
    return question_type, answer_type, answers


def _prediction(rng: random.Random, answers: list[str], correct: float) -> str:
    answer = answers[0] if rng.random() < correct else rng.choice(OTHER + ("yes", "no", "2"))
    variant = rng.random()
    if variant < 0.1:
        return answer.capitalize() + "."
    if variant < 0.15:
        return {"2": "two", "3": "three", "1": "one"}.get(answer, "the " + answer)
    return answer


def synthetic_records(questions: int, seed: int) -> list[dict[str, Any]]:
    """One model's records for every level: clean plus the 14 corruptions at severities 1..5."""
    rng = random.Random(seed)
    bank = [_question(rng) for _ in range(questions)]
    levels = [("clean", 0)] + [(name, severity) for name in VRB_PAPER_CORRUPTIONS for severity in range(1, 6)]
    records = []
    for corruption, severity in levels:
        correct = 0.78 - 0.06 * severity
        for question_id, (question_type, answer_type, answers) in enumerate(bank):
            records.append(
                {
                    "question_id": question_id,
                    "answers": list(answers),
                    "multiple_choice_answer": answers[0],
                    "question_type": question_type,
                    "answer_type": answer_type,
                    "corruption": corruption,
                    "severity": severity,
                    "prediction": _prediction(rng, answers, correct),
                }
            )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=16_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    options = parser.parse_args()
    if options.quick:
        options.questions = 200

    import numpy as np

    from lmms_eval_tasks.tasks.vrb.scoring import Options, robustness_array, score

    records = synthetic_records(options.questions, options.seed)
    print(f"{len(records)} records ({options.questions} questions x 71 levels)")

    start = time.perf_counter()
    metrics = score.checked(records, Options())[0]  # a run's path: records and options checked before, once
    scoring = time.perf_counter() - start
    print(
        f"score_records: {scoring:.2f} s; accuracy_clean={metrics['accuracy_clean']:.4f} "
        f"error_rate={metrics['error_rate']:.5f} first_drop={metrics['first_drop']:.4f}"
    )

    rng = np.random.default_rng(options.seed)
    table = np.clip(0.8 - 0.05 * np.arange(6) * rng.uniform(0.2, 1.5, size=(6, 14, 1)), 0.0, 1.0)
    table[:, :, 0] = 0.8
    start = time.perf_counter()
    pool = robustness_array(table, [f"model{i}" for i in range(6)], list(VRB_PAPER_CORRUPTIONS))
    pool_seconds = time.perf_counter() - start
    vre = [round(entry["vre"], 3) for entry in pool["models"].values()]
    print(f"pool of 6 x 14 cells: {pool_seconds * 1000:.1f} ms; VRE {vre}")

    from lmms_eval.tasks.vqav2.utils import vqav2_process_results

    reference = records[: options.questions]
    start = time.perf_counter()
    host_total = 0.0
    for record in reference:
        doc = {
            "answers": [{"answer": answer, "answer_id": i} for i, answer in enumerate(record["answers"])],
            "question_id": record["question_id"],
        }
        host_total += vqav2_process_results(doc, [record["prediction"]])["exact_match"]
    host_seconds = (time.perf_counter() - start) * len(records) / len(reference)
    ours_clean = metrics["accuracy_clean"]
    assert abs(host_total / len(reference) - ours_clean) < 1e-12, (host_total / len(reference), ours_clean)
    total = scoring + pool_seconds
    print(f"host per-question scoring extrapolated to {len(records)} records: {host_seconds:.1f} s")
    print(f"RESULT seconds={total:.2f} records={len(records)} host_equivalent_seconds={host_seconds:.1f}")


if __name__ == "__main__":
    main()
