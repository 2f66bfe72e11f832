"""Nothing lost, nothing silent: a judge that refuses every call keeps the generations (and `score` later
gives the numbers a run that never failed gives), a host save that fails is a failed run naming the file,
`report` shows every run of an output folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, stable_fraction
from helpers import REPO_ROOT, offline_environment, run_launcher

from lmms_eval_tasks.judges import load_prompt
from lmms_eval_tasks.reporting.schema import read_report

pytestmark = pytest.mark.slow

TASKS = ("hallusionbench_sample", "contextual_sample")
BENCHMARK_OF = {"hallusionbench_sample": "hallusionbench", "contextual_sample": "contextual"}
CORRECTNESS_PREFIX = load_prompt("hallusionbench_correctness_judge").split("{question}")[0]
CONSISTENCY_PREFIX = load_prompt("hallusionbench_consistency_same_judge").split("{response_current}")[0]
MODEL = ("--model", "random_guess", "--model_args", "seed=0")


def working_judge(prompt: str) -> str:
    """A deterministic judge whose verdicts differ between prompts (HallusionBench and ConTextual)."""
    pick = stable_fraction("verdict" + prompt) < 0.5
    if prompt.startswith(CORRECTNESS_PREFIX):
        return "correct" if pick else "incorrect"
    if prompt.startswith(CONSISTENCY_PREFIX):
        return "same" if pick else "different"
    return f"Compared with the ground truth.\nJudgement: {'Yes' if pick else 'No'}"


def judge_environment(server: FakeOpenAIServer, cache: Path) -> dict[str, str]:
    return offline_environment(
        OPENAI_API_URL=server.base_url,
        OPENAI_API_KEY="test-key",
        LMMS_EVAL_TASKS_JUDGE="auto",
        LMMS_EVAL_TASKS_JUDGE_CACHE=str(cache),
    )


def run_tasks(output: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_launcher(
        "--tasks", ",".join(TASKS), *MODEL, "--output_path", str(output), "--log_samples",
        environment=environment,
    )  # fmt: skip


def score(benchmark: str, path: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "score", benchmark, str(path)],
        capture_output=True, text=True, env=environment, cwd=REPO_ROOT, timeout=600, check=False,
    )  # fmt: skip


def test_a_refusing_judge_loses_no_generation_and_score_completes_the_run(tmp_path):
    failed_output, clean_output = tmp_path / "failed", tmp_path / "clean"
    with FakeOpenAIServer(working_judge, faults=lambda call: "unauthorized") as refusing:
        failed = run_tasks(failed_output, judge_environment(refusing, tmp_path / "cache_failed.sqlite"))
    assert failed.returncode != 0
    last = failed.stderr.strip().splitlines()[-1]
    run_folder = next(path for path in failed_output.glob("lmms_eval_tasks/*") if path.is_dir())
    records_files = {task: run_folder / f"{task}_samples.jsonl" for task in TASKS}
    # the launcher's last line names the file and the one command that re-judges it
    assert f"lmms-eval-tasks score contextual {records_files['contextual_sample']}" in last, last
    for task, path in records_files.items():
        assert f"lmms-eval-tasks score {BENCHMARK_OF[task]} {path}" in failed.stderr
        assert not (run_folder / f"{task}_report.json").exists()  # no metric for a task nobody judged
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert len(rows) == {"hallusionbench_sample": 29, "contextual_sample": 10}[task]
        assert all(isinstance(row["prediction"], str) for row in rows)
        # the host went on and saved its own samples files too
        assert len(list(failed_output.glob(f"*_samples_{task}.jsonl"))) == 1
    assert "test-key" not in failed.stderr

    with FakeOpenAIServer(working_judge) as working:
        environment = judge_environment(working, tmp_path / "cache_rescore.sqlite")
        rescored = {task: score(BENCHMARK_OF[task], records_files[task], environment) for task in TASKS}
        clean = run_tasks(clean_output, judge_environment(working, tmp_path / "cache_clean.sqlite"))
    assert clean.returncode == 0, clean.stderr[-3000:]
    clean_folder = next(path for path in clean_output.glob("lmms_eval_tasks/*") if path.is_dir())
    for task in TASKS:
        assert rescored[task].returncode == 0, rescored[task].stderr[-3000:]
        completed = read_report(run_folder / f"{task}_report.json")
        never_failed = read_report(clean_folder / f"{task}_report.json")
        assert completed["metrics"] == never_failed["metrics"], task
        assert completed["warnings"] == never_failed["warnings"], task
        assert json.loads(rescored[task].stdout) == never_failed["metrics"], task
        assert completed["provenance"]["run_id"] == run_folder.name
        assert completed["provenance"]["model_args"] == "seed=0"
        assert "--tasks" in completed["provenance"]["command_line"]  # the run's command, not `score`'s
        assert completed["details"]["scored_later"]["by"] == "lmms-eval-tasks score"
        assert not (run_folder / f"{task}_pending.json").exists()
    hallusionbench = read_report(run_folder / "hallusionbench_sample_report.json")["metrics"]
    assert hallusionbench["aAcc"] is not None  # judged: a number, not the failed run's NaN


FULL_DISK_LAUNCHER = """
import builtins, errno, fnmatch, io, os, sys
real_open = io.open
LIMIT = 4096

class FullDisk(io.TextIOWrapper):
    pass

def open_on_a_full_disk(file, mode="r", *args, **kwargs):
    name = os.path.basename(os.fspath(file)) if isinstance(file, (str, os.PathLike)) else ""
    host_file = fnmatch.fnmatch(name, "*_results.json") or fnmatch.fnmatch(name, "*_samples_*.jsonl")
    handle = real_open(file, mode, *args, **kwargs)
    if not host_file or not any(flag in mode for flag in "wa"):
        return handle
    write = handle.write
    def limited(text):
        room = LIMIT - handle.tell()
        if len(text) > room:  # what the disk takes, then ENOSPC
            write(text[: max(room, 0)])
            handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(text)
    handle.write = limited
    return handle

io.open = builtins.open = open_on_a_full_disk
from lmms_eval_tasks.host.launcher import run
sys.argv = ["lmms_eval", *sys.argv[1:]]
run()
"""


def test_a_host_save_on_a_full_disk_fails_the_run_naming_the_file(tmp_path):
    output = tmp_path / "out"
    completed = run_launcher(  # `python -c FULL_DISK_LAUNCHER ARGS`, forked from the warm launcher
        "--tasks", "contextual_sample", *MODEL, "--output_path", str(output), "--log_samples",
        code=FULL_DISK_LAUNCHER,
    )  # fmt: skip
    assert completed.returncode == 1, completed.stderr[-3000:]
    results = next(output.glob("*_results.json"))
    with pytest.raises(ValueError):  # cut: the host itself only logged a warning and went on
        json.loads(results.read_text(encoding="utf-8"))
    lines = completed.stderr.strip().splitlines()
    assert any(str(results) in line and "results file is incomplete" in line for line in lines[-3:])
    last = lines[-1]  # the last file named: the samples file, cut too
    samples = next(output.glob("*_samples_contextual_sample.jsonl"))
    assert f"{samples}: the host's samples file of contextual_sample is incomplete" in last, last
    assert "free space" in last
    # the pack's own files were written before the host's save, whole
    report = read_report(next(output.glob("lmms_eval_tasks/*/contextual_sample_report.json")))
    assert report["task"] == "contextual_sample"
    assert "the pack's own reports and records of this run are complete in" in last


def test_every_model_and_every_model_args_of_one_output_folder_is_a_run_in_the_report(tmp_path):
    from argparse import Namespace

    from lmms_eval_tasks.human_report import load_runs
    from lmms_eval_tasks.reporting.schema import build_report, run_dir, write_report_files

    output = tmp_path / "out"
    setups = [
        ("random_guess", "seed=0", 0.50),
        ("random_guess", "seed=1", 0.25),
        ("llava_hf", "pretrained=org/tiny-llava,device=cpu", 0.75),
        ("llava_hf", "pretrained=org/other-llava,device=cpu", 1.00),
    ]
    for model, model_args, accuracy in setups:
        args = Namespace(output_path=str(output), model=model, model_args=model_args, limit=None, seed=None)
        folder = run_dir(args)
        metrics = {"micro_f1": accuracy}
        report = build_report(benchmark="vqdv1", task="vqdv1_sample", metrics=metrics, args=args)
        write_report_files(folder, report)
    # random_guess writes into <out>/lmms_eval_tasks, the llava models into <out>/<model>/lmms_eval_tasks
    assert (output / "lmms_eval_tasks").is_dir()
    assert (output / "org__tiny-llava" / "lmms_eval_tasks").is_dir()
    # a task whose scoring failed: left out, and said so
    pending_folder = output / "lmms_eval_tasks" / "20990101_000000"
    pending_folder.mkdir()
    (pending_folder / "contextual_sample_pending.json").write_text('{"benchmark": "contextual"}')
    skipped: list[str] = []
    runs = load_runs([output], skipped)
    reported = [run.reports["vqdv1_sample"] for run in runs]
    found = {(report["provenance"]["model_args"], report["metrics"]["micro_f1"]) for report in reported}
    assert found == {(model_args, accuracy) for _, model_args, accuracy in setups}
    assert len({run.label for run in runs}) == 4
    assert len(skipped) == 1 and "contextual_sample" in skipped[0]
    assert "lmms-eval-tasks score contextual" in skipped[0]

    completed = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks.cli", "report", str(output), "--out", str(tmp_path / "rep")],
        capture_output=True, text=True, env=offline_environment(), cwd=REPO_ROOT, timeout=600, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    markdown = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    for _, model_args, _ in setups:
        assert model_args in markdown, model_args
    assert "skipped" in completed.stderr and "contextual_sample" in completed.stderr


def test_a_pack_report_that_cannot_be_written_names_the_file_and_keeps_the_records(tmp_path):
    """A real OS write limit (RLIMIT_FSIZE 3000 bytes: the saved records, 2955 bytes, fit; the report does
    not): the run fails naming the report file, the records stay whole and the last line is `score`."""
    import resource
    import signal

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG from write() instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))

    output = tmp_path / "out"
    completed = subprocess.run(
        [sys.executable, "-m", "lmms_eval_tasks", "--tasks", "contextual_sample", *MODEL,
         "--output_path", str(output), "--log_samples"],
        capture_output=True, text=True, env=offline_environment(), cwd=REPO_ROOT, timeout=900, check=False,
        preexec_fn=small_files,
    )  # fmt: skip
    assert completed.returncode == 1, completed.stderr[-3000:]
    run_folder = next(path for path in output.glob("lmms_eval_tasks/*") if path.is_dir())
    records = run_folder / "contextual_sample_samples.jsonl"
    assert f"cannot write {run_folder / 'contextual_sample_report.json'}" in completed.stderr
    assert not (run_folder / "contextual_sample_report.json").exists()  # whole or absent
    assert not list(run_folder.glob(".*.tmp"))
    rows = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 10
    last = completed.stderr.strip().splitlines()[-1]
    assert f"lmms-eval-tasks score contextual {records}" in last, last
