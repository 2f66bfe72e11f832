"""Worst-case time of every parser of model output on a corpus of hostile outputs (~100 kB each).

Parsers come from ``lmms_eval_tasks.framework.parser_index.PARSERS`` (extend that list for a new benchmark);
the corpus from ``hostile_corpus()``. Each (parser, text) pair is timed as the best of ``--repeats`` runs
and normalised to milliseconds per 100 kB of UTF-8 text; the target is under 50 ms for every parser. The
best thread CPU time is kept too (``max_cpu_ms``): other processes on a shared machine do not inflate it.

    python benchmarks/parser_worst_case.py [--size 100000] [--repeats 3] [--only dare.]

Last line: ``RESULT max_ms=<worst ms per 100 kB> parser=<which> input=<which> max_cpu_ms=<worst CPU ms>``.
"""

from __future__ import annotations

import argparse
import time

from lmms_eval_tasks.framework.parser_index import PARSERS, call_parser, hostile_corpus, text_bytes

TARGET_MS = 50.0


def main() -> None:
    """Time every parser on every hostile input and print per-parser worst cases."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100_000, help="bytes per hostile input")
    parser.add_argument("--repeats", type=int, default=3, help="runs per (parser, input); the best counts")
    parser.add_argument("--only", default="", help="only parsers whose name starts with this")
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    args = parser.parse_args()
    if args.quick:
        args.size, args.repeats = 5_000, 1

    corpus = list(hostile_corpus(args.size))
    entries = [entry for entry in PARSERS if entry.name.startswith(args.only)]
    print(f"{len(entries)} parsers x {len(corpus)} hostile inputs of ~{args.size} B, best of {args.repeats}")
    overall, overall_cpu = (0.0, "-", "-"), 0.0
    for entry in entries:
        function = entry.load()
        call_parser(function, "warm up: A")  # lazy imports and data (WordNet) load before timing
        worst = (0.0, "-")
        for name, text in corpus:
            size = text_bytes(text)
            best = best_cpu = float("inf")
            for _ in range(args.repeats):
                start, cpu = time.perf_counter(), time.thread_time()
                call_parser(function, text)
                best_cpu = min(best_cpu, time.thread_time() - cpu)
                best = min(best, time.perf_counter() - start)
            per_100kb = best * 1000 * 100_000 / size
            overall_cpu = max(overall_cpu, best_cpu * 1000 * 100_000 / size)
            worst = max(worst, (per_100kb, name))
        flag = "" if worst[0] < TARGET_MS else "  OVER TARGET"
        print(f"{entry.name:<42} worst {worst[0]:8.2f} ms/100kB  on {worst[1]}{flag}", flush=True)
        overall = max(overall, (worst[0], entry.name, worst[1]))
    print(f"RESULT max_ms={overall[0]:.2f} parser={overall[1]} input={overall[2]}", end=" ")
    print(f"max_cpu_ms={overall_cpu:.2f}")


if __name__ == "__main__":
    main()
