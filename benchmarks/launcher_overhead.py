"""What one `python -m lmms_eval_tasks` run costs, with and without the host task index cache, in one run.

Every launcher run (each test's, the demo's, every user's) used to index the host's ~1,900 built-in task YAML
files again; the `task_index_cache` host patch serves that index from `$LMMS_EVAL_TASKS_CACHE` while every
file it was built from is unchanged. Both sides run the same small evaluation (the seeded `random_guess`
baseline on one bundled sample task), alternating, and must write the same results:

- warm: this process imports the host once (as the tests' warm launcher does), then forks one child per run
  that runs the launcher's `main`; the child's CPU time (user + system, from `wait4`) is one run's cost
  after the host's import. `--quick` (the test suite's check that the script works) measures one pair.
- cold: a fresh `python -m lmms_eval_tasks` per run, host import included (not in `--quick`).

"without" removes the `task_index_cache` patch from the run's patch list (nothing else changes); "with" uses
a cache the script built first (its cost is printed too). Ratios are of medians over the pairs;
CPU time, which other load on a shared machine disturbs far less than wall time, is the headline.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmms_eval_tasks.host.speedups.shared_import import (
    HOST_MODULES,  # what every launcher run imports from the host
)

TASK = "vqdv1_sample"
# One launcher run, as `python -m lmms_eval_tasks ARGS` but able to leave the cache patch out.
RUN = """
import sys
from lmms_eval_tasks.host import patches
if sys.argv[1] == "without":
    del patches.PATCHES["task_index_cache"]
from lmms_eval_tasks.host.launcher import main
sys.exit(main(sys.argv[2:]))
"""


def launcher_arguments(output: Path) -> list[str]:
    return [
        "--tasks",
        TASK,
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--output_path",
        str(output),
    ]


def results_of(output: Path) -> dict:
    """The metrics of the run's results file (times, paths and run ids left out)."""
    (path,) = output.rglob("*_results.json")
    return json.loads(path.read_text(encoding="utf-8"))["results"]


def warm_run(variant: str, output: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one forked launcher run after this process imported the host."""
    logs = output.with_suffix(".log")
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: becomes the launcher, its output to a log file
        code = 1
        try:
            handle = os.open(logs, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(handle, 1)
            os.dup2(handle, 2)
            from lmms_eval_tasks.host import patches

            if variant == "without":
                del patches.PATCHES["task_index_cache"]
            from lmms_eval_tasks.host.launcher import main

            code = main(launcher_arguments(output))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the {variant} run failed:\n{logs.read_text(encoding='utf-8')[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def build_cache() -> tuple[float, float]:
    """(CPU seconds, wall seconds) of building the host task index cache in a forked child (one TaskManager
    with the launcher's task index patches), so the "with" runs find it."""
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            from lmms_eval.tasks import TaskManager

            from lmms_eval_tasks.host import patches

            patches.apply_patches(names=["pack_task_index", "libyaml_task_index", "task_index_cache"])
            TaskManager("ERROR")
            code = 0
        finally:
            os._exit(code)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit("building the host task index cache failed")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - started


def cold_run(variant: str, output: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fresh `python -m lmms_eval_tasks`-equivalent process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", RUN, variant, *launcher_arguments(output)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise SystemExit(f"the cold {variant} run failed:\n{completed.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def median(runs: list[tuple[float, float]], index: int) -> float:
    return statistics.median(run[index] for run in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=3, help="alternating without/with runs per figure")
    parser.add_argument("--quick", action="store_true", help="one warm pair, no cold runs")
    args = parser.parse_args()
    pairs = 1 if args.quick else args.pairs
    environment = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with tempfile.TemporaryDirectory(prefix="launcher_overhead_") as folder:
        os.environ.update({**environment, "LMMS_EVAL_TASKS_CACHE": str(Path(folder, "cache"))})
        for module in HOST_MODULES:  # once, as the tests' warm launcher does
            importlib.import_module(module)
        build = build_cache()
        runs: dict[str, dict[str, list[tuple[float, float]]]] = {"warm": {}, "cold": {}}
        outputs: dict[str, list[dict]] = {"without": [], "with": []}
        plan = [("warm", warm_run)] + ([] if args.quick else [("cold", cold_run)])
        for mode, run in plan:
            for number in range(pairs):
                for variant in ("without", "with"):
                    output = Path(folder, f"{mode}_{variant}_{number}")
                    runs[mode].setdefault(variant, []).append(run(variant, output))
                    outputs[variant].append(results_of(output))
    if any(result != outputs["without"][0] for result in outputs["without"] + outputs["with"]):
        raise SystemExit("the runs with and without the task index cache wrote different results")
    print(
        f"one launcher run: --tasks {TASK} --model random_guess; median of {pairs} pair(s); CPU: user + sys"
    )
    print(f"  building the cache once (one TaskManager): {build[0]:.2f} s CPU, {build[1]:.2f} s wall")
    result = {}
    for mode in runs:
        if not runs[mode]:
            result[f"{mode}_cpu_ratio"] = "skipped"
            continue
        without, with_cache = runs[mode]["without"], runs[mode]["with"]
        cpu_without, cpu_with = median(without, 0), median(with_cache, 0)
        wall_without, wall_with = median(without, 1), median(with_cache, 1)
        print(
            f"  {mode}: without the cache {cpu_without:.2f} s CPU ({wall_without:.2f} s wall), "
            f"with it {cpu_with:.2f} s CPU ({wall_with:.2f} s wall)"
        )
        result[f"{mode}_cpu_ratio"] = f"{cpu_with / cpu_without:.3f}"
        result[f"{mode}_cpu_saved"] = f"{cpu_without - cpu_with:.2f}"
        result[f"{mode}_wall_ratio"] = f"{wall_with / wall_without:.3f}"
    print("  the results files of every run: identical")
    print("RESULT " + " ".join(f"{name}={value}" for name, value in result.items()))


if __name__ == "__main__":
    main()
