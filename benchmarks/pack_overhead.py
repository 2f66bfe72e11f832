"""What the pack adds to the host's start-up: `--tasks list`, and loading one task.

Both are measured as ratios against the host alone, in one run, alternating fresh subprocesses so that
machine noise hits both sides alike; each figure is the median of several pairs. The ratios use the
child processes' CPU time (user + system), which other load on a shared 2-core machine disturbs far
less than wall time; wall-time ratios are printed too.

- list_ratio: `python -m lmms_eval_tasks --tasks list` (host + pack) over the host's `lmms-eval --tasks list`.
- load_ratio: building a TaskManager and loading the pack's first `*_sample` task (its hooks, YAML
  templates and bundled data) over building a host-only TaskManager and loading a plain YAML task that
  reads the same bundled data file with no pack code (the cost any local task has).
Target (issue 2): both ratios below 1.10.

`--quick` (the test suite's check that the script works) loads the plain task and then the pack's task in
one process, and indexes neither the host's ~3,200 built-in tasks (about 10 s of CPU per index): each
process start imports the host (about 11 s of CPU), and the `--tasks list` pair would add two more starts;
it prints `list_ratio=skipped`, and its load_ratio is no measurement (the second load finds the host's
modules warm).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.framework.task_index import load_yaml, pack_tasks, sample_tasks

ENVIRONMENT = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

# What the host's `lmms-eval` console script runs (`python -m lmms_eval` imports its __main__ twice).
HOST_CONSOLE_SCRIPT = "import sys; from lmms_eval.cli.dispatch import main; sys.argv[0] = 'lmms-eval'; main()"

# Loads each (include path, task, with the pack, with the host's built-in tasks) of argv[1] (a JSON list) in
# turn; prints their CPU seconds.
LOAD_SCRIPT = """
import sys, time, json
from lmms_eval.tasks import TaskManager, get_task_dict
seconds = []
for include, task, use_pack, defaults in json.loads(sys.argv[1]):
    started = time.process_time()
    if use_pack:
        from lmms_eval_tasks.host.patches import apply_patch
        apply_patch("pack_task_index")
    manager = TaskManager("ERROR", include_path=include or None, include_defaults=defaults)
    tasks = get_task_dict([task], manager)
    seconds.append(time.process_time() - started)
print(json.dumps({"seconds": seconds}))
"""


def timed(command: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one subprocess run; raises if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env=ENVIRONMENT, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise RuntimeError(f"{command} failed:\n{completed.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def load_seconds(*loads: tuple[str, str, bool, bool]) -> list[float]:
    """CPU seconds spent (after importing the host) indexing tasks and loading each (include path, task, with
    the pack, with the host's built-in tasks) of ``loads`` in turn, in one fresh process (a measurement gives
    it one load)."""
    completed = subprocess.run(
        [sys.executable, "-c", LOAD_SCRIPT, json.dumps(loads)],
        capture_output=True,
        text=True,
        env=ENVIRONMENT,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"loading {loads} failed:\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])["seconds"]


def first_sample_leaf_task() -> tuple[str, dict]:
    """A leaf `*_sample` task (not a group) and its resolved YAML config."""
    by_name = {entry.name: entry for entry in pack_tasks()}
    for name in sample_tasks():
        entry = by_name[name]
        config = load_yaml((TASKS_DIR / entry.path).resolve())
        while entry.kind == "group":
            member = config["task"][0]
            member = member if isinstance(member, str) else member.get("task")
            entry = by_name[member]
            config = load_yaml((TASKS_DIR / entry.path).resolve())
        return entry.name, {**config, "_folder": str((TASKS_DIR / entry.path).parent)}
    raise SystemExit("no *_sample task in the pack")


def text_column(data_file: str) -> str:
    """The first string column of a bundled data file: what the plain task's prompt reads (sample tasks
    differ: ConTextual has ``instruction``, HallusionBench ``question``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for schema_field in pq.read_schema(data_file):
        if pa.types.is_string(schema_field.type) or pa.types.is_large_string(schema_field.type):
            return schema_field.name
    raise SystemExit(f"{data_file}: no string column for the plain reference task's prompt")


def write_plain_task(folder: Path, config: dict) -> str:
    """A host-only YAML task reading the same bundled data file with built-in settings only."""
    data_files = config["dataset_kwargs"]["data_files"]
    split = next(iter(data_files)) if isinstance(data_files, dict) else "train"
    files = data_files[split] if isinstance(data_files, dict) else data_files
    files = [files] if isinstance(files, str) else list(files)
    absolute = [str((Path(config["_folder"]) / path).resolve()) for path in files]
    column = text_column(absolute[0])
    name = "pack_overhead_plain_reference"
    (folder / f"{name}.yaml").write_text(
        "\n".join(
            [
                f"task: {name}",
                f"dataset_path: {config['dataset_path']}",
                "dataset_kwargs:",
                "  data_files:",
                f"    {split}: {json.dumps(absolute)}",
                f"test_split: {split}",
                "output_type: generate_until",
                f'doc_to_text: "{{{{{column}}}}}"',
                f'doc_to_target: "{{{{{column}}}}}"',
                "metric_list:",
                "  - metric: exact_match",
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=5, help="alternating host/pack runs per figure")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="both loads in one process, no built-in tasks, no --tasks list pairs",
    )
    args = parser.parse_args()
    if args.quick:
        args.pairs = 1

    list_host, list_pack = [], []
    for _ in range(0 if args.quick else args.pairs):
        list_host.append(timed([sys.executable, "-c", HOST_CONSOLE_SCRIPT, "--tasks", "list"]))
        list_pack.append(timed([sys.executable, "-m", "lmms_eval_tasks", "--tasks", "list"]))
    task, config = first_sample_leaf_task()
    load_host, load_pack = [], []
    with tempfile.TemporaryDirectory() as folder:
        plain = write_plain_task(Path(folder), config)
        defaults = not args.quick
        host_load, pack_load = (folder, plain, False, defaults), ("", task, True, defaults)
        if args.quick:  # the host-only load first: the pack's patches cannot be taken back
            [host_seconds, pack_seconds] = load_seconds(host_load, pack_load)
            load_host.append(host_seconds)
            load_pack.append(pack_seconds)
        for _ in range(0 if args.quick else args.pairs):
            load_host.extend(load_seconds(host_load))
            load_pack.extend(load_seconds(pack_load))

    def median(runs: list[tuple[float, float]], index: int) -> float:
        return statistics.median(run[index] for run in runs)

    load_ratio = statistics.median(load_pack) / statistics.median(load_host)
    print(
        f"load {task}: host-only plain task {statistics.median(load_host):.2f} s CPU, "
        f"pack task {statistics.median(load_pack):.2f} s CPU"
    )
    if not list_host:
        print(f"RESULT load_ratio={load_ratio:.3f} list_ratio=skipped")
        return
    list_ratio = median(list_pack, 0) / median(list_host, 0)
    list_wall_ratio = median(list_pack, 1) / median(list_host, 1)
    print(
        f"--tasks list: host {median(list_host, 0):.2f} s CPU ({median(list_host, 1):.2f} s wall), "
        f"with pack {median(list_pack, 0):.2f} s CPU ({median(list_pack, 1):.2f} s wall)"
    )
    print(
        f"RESULT list_ratio={list_ratio:.3f} load_ratio={load_ratio:.3f} "
        f"list_wall_ratio={list_wall_ratio:.3f}"
    )


if __name__ == "__main__":
    main()
