"""Judge throughput: the pack's concurrent, cached judging vs one-at-a-time judging, in the same process.

Judges ``--items`` prompts against a local fake OpenAI-compatible server that answers after ``--latency``
seconds, with the default concurrency, then times one-at-a-time judging (concurrency 1) on a subset and
extrapolates per item (timing 2,000 x 100 ms sequentially would take over 3 minutes; ``--sequential-subset 0``
times them all), then reruns the full set and counts endpoint calls (all should be cache hits).
Last line: ``RESULT speedup=<x> rerun_calls=<n>``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the reusable fake server lives with the tests

from fake_openai import FakeOpenAIServer  # noqa: E402
from loguru import logger  # noqa: E402

from lmms_eval_tasks.judges import JudgeRequest, get_judge  # noqa: E402


def reply_for(prompt: str) -> str:
    """A cheap deterministic verdict so correctness can be checked per item."""
    return "correct" if sum(map(ord, prompt)) % 2 else "incorrect"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.1, help="fake server latency per request (s)")
    parser.add_argument(
        "--sequential-subset",
        type=int,
        default=100,
        help="items timed one at a time, extrapolated per item (0: time all items)",
    )
    parser.add_argument("--quick", action="store_true", help="small run: checks the script works")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.items, arguments.latency, arguments.sequential_subset = 60, 0.01, 10

    requests = [
        JudgeRequest(
            f"Question: benchmark item {index}?\nReference answer: yes\nPrediction answer: maybe {index}"
        )
        for index in range(arguments.items)
    ]
    expected = [reply_for(request.prompt) for request in requests]
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeOpenAIServer(reply_for, latency=arguments.latency) as server,
    ):
        settings = {"base_url": server.base_url, "api_key": "sk-benchmark-not-a-real-key"}
        concurrent_judge = get_judge("openai", cache_path=Path(folder) / "concurrent.sqlite", **settings)
        started = time.perf_counter()
        replies = concurrent_judge.judge(requests, desc="concurrent")
        concurrent_seconds = time.perf_counter() - started
        concurrent_calls = server.call_count()
        wrong = sum(row[0].text != want for row, want in zip(replies, expected, strict=True))

        subset = arguments.sequential_subset or arguments.items
        subset = min(subset, arguments.items)
        sequential_judge = get_judge(
            "openai", cache_path=Path(folder) / "sequential.sqlite", concurrency=1, **settings
        )
        started = time.perf_counter()
        sequential_judge.judge(requests[:subset], desc="one at a time")
        sequential_subset_seconds = time.perf_counter() - started
        sequential_seconds = sequential_subset_seconds / subset * arguments.items

        server.reset()
        rerun_judge = get_judge("openai", cache_path=Path(folder) / "concurrent.sqlite", **settings)
        started = time.perf_counter()
        rerun = rerun_judge.judge(requests, desc="rerun")
        rerun_seconds = time.perf_counter() - started
        rerun_calls = server.call_count()
        rerun_wrong = sum(row[0].text != want for row, want in zip(rerun, expected, strict=True))

    speedup = sequential_seconds / concurrent_seconds
    print(f"items={arguments.items} latency={arguments.latency}s concurrency={concurrent_judge.concurrency}")
    print(f"concurrent: {concurrent_seconds:.2f} s, {concurrent_calls} calls, {wrong} wrong verdicts")
    extrapolated = "" if subset == arguments.items else f" (timed on {subset} items, extrapolated per item)"
    print(
        f"one at a time: {sequential_seconds:.2f} s for {arguments.items} items{extrapolated}; "
        f"{sequential_subset_seconds:.2f} s measured"
    )
    print(
        f"rerun: {rerun_seconds:.2f} s, {rerun_calls} calls, {rerun_wrong} wrong verdicts, "
        f"cache hits {rerun_judge.usage()['cache_hits']}"
    )
    print(f"RESULT speedup={speedup:.2f} rerun_calls={rerun_calls}")


if __name__ == "__main__":
    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    main()
