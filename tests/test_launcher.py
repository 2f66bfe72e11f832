"""The `lmms_eval` launcher: the host CLI plus the pack's tasks, and an honest exit code."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lmms_eval_tasks.framework.task_index import pack_tasks
from lmms_eval_tasks.host.integration import with_pack_dir
from tests.helpers import offline_environment, run_launcher

pytestmark = pytest.mark.slow


def _write_local_task(folder: Path, name: str, process_results: str) -> None:
    """A minimal text-only task on a local JSON file, with hooks in the folder's utils.py."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"question": f"Is {n} even?", "answer": "yes" if n % 2 == 0 else "no"} for n in range(3)]
    (folder / "data.json").write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    (folder / "utils.py").write_text(
        textwrap.dedent(
            f"""
            def doc_to_visual(doc):
                return []

            def doc_to_text(doc, lmms_eval_specific_kwargs=None):
                return doc["question"]

            def process_results(doc, results):
                {process_results}
            """
        ),
        encoding="utf-8",
    )
    (folder / f"{name}.yaml").write_text(
        textwrap.dedent(
            f"""
            task: {name}
            dataset_path: json
            dataset_kwargs:
              data_files:
                test: data.json
            test_split: test
            output_type: generate_until
            doc_to_visual: !function utils.doc_to_visual
            doc_to_text: !function utils.doc_to_text
            doc_to_target: answer
            process_results: !function utils.process_results
            generation_kwargs:
              max_new_tokens: 4
            metric_list:
              - metric: exact
                aggregation: mean
                higher_is_better: true
            """
        ),
        encoding="utf-8",
    )


def test_pack_dir_is_appended_after_user_paths_once() -> None:
    pack = with_pack_dir(None)
    assert len(pack) == 1
    assert with_pack_dir("/user/tasks")[0] == "/user/tasks"
    assert with_pack_dir(["/a", "/b"])[:2] == ["/a", "/b"]
    assert with_pack_dir(pack) == pack  # idempotent: never added twice


def test_tasks_list_shows_pack_tasks_next_to_host_tasks() -> None:
    completed = run_launcher("--tasks", "list")
    assert completed.returncode == 0, completed.stderr[-3000:]
    listed = {  # the last name carries the log's colour reset (a task named zz_* is that one)
        line.strip()[2:].removesuffix("\x1b[0m")
        for line in (completed.stdout + completed.stderr).splitlines()
        if line.strip().startswith("- ")
    }
    assert "hallusion_bench_image" in listed  # a host built-in
    pack_task_names = {entry.name for entry in pack_tasks() if entry.kind == "task"}
    assert pack_task_names, "the pack defines no tasks"
    assert pack_task_names <= listed, sorted(pack_task_names - listed)[:10]


def test_unknown_task_exits_non_zero_with_a_clear_message() -> None:
    names = "does_not_exist,hallusionbench_sampel,mmmu_vl"
    completed = run_launcher("--tasks", names, "--model", "random_guess")
    assert completed.returncode != 0
    last = completed.stderr.strip().splitlines()[-1]
    # one line: each unknown name, the closest pack and host names, and where the full list is
    assert last.startswith(
        "lmms_eval: unknown task 'does_not_exist', 'hallusionbench_sampel' (did you mean "
    ), last
    assert "hallusionbench_sample" in last.split("'mmmu_vl'")[0], last
    assert "'mmmu_vl' (did you mean mmmu_val" in last, last  # a host task
    assert "`lmms_eval --tasks list`" in last and "`lmms-eval-tasks tasks`" in last, last


def test_failing_task_run_exits_non_zero_and_user_include_path_composes(tmp_path: Path) -> None:
    _write_local_task(
        tmp_path / "user_tasks", "pack_test_exploding_task", "raise RuntimeError('boom in process_results')"
    )
    completed = run_launcher(
        "--include_path",
        str(tmp_path / "user_tasks"),
        "--tasks",
        "pack_test_exploding_task",
        "--model",
        "dummy",
        "--model_args",
        "response=yes",
    )
    assert completed.returncode != 0
    assert "boom in process_results" in completed.stderr


def test_successful_run_with_user_include_path_exits_zero(tmp_path: Path) -> None:
    _write_local_task(
        tmp_path / "user_tasks",
        "pack_test_ok_task",
        "return {'exact': float(results[0].strip().lower() == doc['answer'])}",
    )
    completed = run_launcher(
        "--include_path",
        str(tmp_path / "user_tasks"),
        "--tasks",
        "pack_test_ok_task",
        "--model",
        "dummy",
        "--model_args",
        "response=yes",
        "--output_path",
        str(tmp_path / "out"),
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = json.loads(next((tmp_path / "out").rglob("*_results.json")).read_text())
    # 3 questions, answers yes/no/yes for 0,1,2; the dummy model says "yes": 2 of 3 right.
    assert results["results"]["pack_test_ok_task"]["exact,none"] == pytest.approx(2 / 3)


def test_a_local_copy_of_a_pack_task_in_include_path_runs_offline(tmp_path: Path) -> None:
    """docs/vrb.md's way to run VRB on a local copy of its data: a user task of the same name that includes
    the pack's and reads a local parquet file. The offline pre-check reads that configuration (it refused
    the run, naming the pack's hub dataset) and the report names the file read."""
    from lmms_eval_tasks import TASKS_DIR

    data = tmp_path / "vqav2_validation.parquet"
    data.write_bytes((Path(TASKS_DIR) / "vrb" / "sample" / "vrb_sample.parquet").read_bytes())
    folder = tmp_path / "user_tasks"
    folder.mkdir()
    pack_yaml = Path(TASKS_DIR) / "vrb" / "yaml" / "levels" / "vrb_clean.yaml"
    (folder / "vrb_clean.yaml").write_text(
        f'include: "{pack_yaml}"\ntask: vrb_clean\ndataset_path: parquet\n'
        f'dataset_kwargs:\n  data_files:\n    validation: "{data}"\n',
        encoding="utf-8",
    )
    completed = run_launcher(
        "--include_path", str(folder), "--tasks", "vrb_clean", "--model", "random_guess",
        "--model_args", "seed=0", "--output_path", str(tmp_path / "out"),
        environment=offline_environment(HF_DATASETS_CACHE=str(tmp_path / "datasets")),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(next((tmp_path / "out").rglob("vrb_clean_report.json")).read_text())
    assert str(data) in json.dumps(report["provenance"])  # the dataset read: the local copy


_LAUNCHER_TRACEBACK = """Traceback (most recent call last):
  File "/venv/bin/accelerate", line 10, in <module>
    sys.exit(main())
  File "/venv/lib/python3.11/site-packages/accelerate/commands/accelerate_cli.py", line 50, in main
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
"""


def _failed_rank(rank: int, code: int) -> str:
    cause = "Signal 6 (SIGABRT) received by PID 7" if code == -6 else "To enable traceback see: https://x"
    return f"  rank      : {rank} (local_rank: 0)\n  exitcode  : {code} (pid: 7)\n  traceback : {cause}\n"


def test_the_two_process_runner_retries_a_native_abort_only_when_no_rank_failed_in_python():
    """Its one retry is for a rank aborted in native code at exit; a rank that exited 1 (a failure the
    launcher named in a closing line, no traceback) beside an aborted one was retried too, hiding a flaky
    product failure behind a warning."""
    from tests.helpers import native_abort_only

    assert native_abort_only(_LAUNCHER_TRACEBACK + _failed_rank(1, -6) + _failed_rank(0, -15))
    product = "lmms_eval: evaluation failed: 3 of 10 requests failed\n" + _LAUNCHER_TRACEBACK
    assert not native_abort_only(product + _failed_rank(0, 1) + _failed_rank(1, -6))


def test_a_progress_bar_closed_at_interpreter_exit_leaves_the_cause_the_last_line(tmp_path):
    """A host progress bar still alive when the interpreter ends (a two-process run stopped by SIGTERM) closes
    from its __del__ through the scrubbed console, which imported at each write: "ImportError: sys.meta_path
    is None" and its traceback came after the line naming the cause."""
    script = tmp_path / "bar.py"
    script.write_text(
        "import builtins, sys\n"
        "from tqdm import tqdm\n"
        "from lmms_eval_tasks.host.scrubbing import ScrubbedStream\n"
        "builtins.bar = tqdm(total=2, file=ScrubbedStream(sys.stderr))  # collected last of all\n"
        "builtins.bar.update(1)\n"
        "print('lmms_eval: evaluation failed: the cause', file=sys.stderr)\n"
    )
    ended = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    last_line = ended.stderr.strip().splitlines()[-1]  # after the bar's first state, as on a terminal
    assert last_line.endswith("lmms_eval: evaluation failed: the cause"), ended.stderr
