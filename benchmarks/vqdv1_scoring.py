"""VQDv1 parsing and scoring speed: 100 kB repeated-box answers, unclosed brackets, a paper-sized run.

Reference in the same process: the official script's extraction (Python's ``re.findall`` with its two
patterns), which is what ``protocol=official`` restates in linear time. Last line: ``RESULT ...``.
"""

from __future__ import annotations

import argparse
import random
import re
import time

from lmms_eval_tasks.tasks.vqdv1 import scoring as vqdv1


def _best_of(function, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def _regex_extraction(text: str) -> list[list[str]]:
    groups = (re.findall(r"[-+]?\d*\.\d+|\d+", inside) for inside in re.findall(r"\[(.*?)\]", text))
    return [numbers for numbers in groups if len(numbers) == 4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    quick = parser.parse_args().quick
    size, brackets, total = (10_000, 2_000, 500) if quick else (100_000, 20_000, 37_057)
    repeated = "[" + "[123, 45, 678, 90], " * (size // 20)
    unclosed = "[" * brackets  # no "]": the script's r"\[(.*?)\]" rescans the line from every "["
    ours = _best_of(lambda: vqdv1.parse_boxes(repeated, 640, 480))
    ours_official = _best_of(lambda: vqdv1.parse_boxes(repeated, 640, 480, official=True))
    regex = _best_of(lambda: _regex_extraction(repeated))
    unclosed_ours = _best_of(lambda: vqdv1.parse_boxes(unclosed, 640, 480, official=True))
    unclosed_regex = _best_of(lambda: _regex_extraction(unclosed), repeats=1)
    rng = random.Random(0)
    records = []
    for index in range(total):  # 37,057: the paper's slim subset size
        count = rng.choice([0, 1, 1, 2, 3, 5])
        boxes = [[rng.randint(0, 500), rng.randint(0, 400), rng.randint(10, 100), rng.randint(10, 60)]
                 for _ in range(count)]  # fmt: skip
        parts = [f"[{x}, {y}, {x + w + rng.randint(-5, 5)}, {y + h}]" for x, y, w, h in boxes]
        text = "[" + ", ".join(parts) + "]"
        records.append({"question_id": index, "gtbox": boxes or [[]], "width": 640, "height": 480,
                        "prediction": text if boxes else "[[]]"})  # fmt: skip
    started = time.perf_counter()
    metrics = vqdv1.score(records)[0]
    scoring_seconds = time.perf_counter() - started
    print(f"100 kB repeated boxes: default {ours * 1e3:.1f} ms, official scanner "
          f"{ours_official * 1e3:.1f} ms, script regexes {regex * 1e3:.1f} ms")  # fmt: skip
    print(f"20k unclosed '[': official scanner {unclosed_ours * 1e3:.2f} ms, "
          f"script regexes {unclosed_regex:.2f} s")  # fmt: skip
    print(f"{total:,} records scored in {scoring_seconds:.2f} s (micro_f1 {metrics['micro_f1']:.2f})")
    print(
        f"RESULT repeated_100kb_ms={ours * 1e3:.1f} regex_reference_ms={regex * 1e3:.1f} "
        f"unclosed_speedup={unclosed_regex / max(unclosed_ours, 1e-9):.0f} "
        f"score_{total}_seconds={scoring_seconds:.2f}"
    )


if __name__ == "__main__":
    main()
