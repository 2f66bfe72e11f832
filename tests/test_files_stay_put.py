"""Files stay where the user put them: no output outside ``--output_path``, one ``prepare`` per folder at a
time with a manifest that matches its rows, a damaged ``latest.json`` kept aside and rebuilt, no temporary
file after SIGTERM, and ``report`` telling an interrupted write from a failed scoring.

Each test fails on the code before issue 30 (through the launcher, ``prepare``, ``load_prepared``,
``write_report_files``, ``score_and_report`` and ``report``'s notes, which existed then).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PIL import Image

from lmms_eval_tasks.framework.preparing import env_var, load_prepared, preparers
from lmms_eval_tasks.host.launcher import main as launcher_main


def test_a_model_folder_outside_the_output_path_is_refused(capsys, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "out"
    code = launcher_main(
        ["--model", "random_guess", "--model_args", "pretrained=..", "--tasks", "vrb_sample_clean"]
        + ["--output_path", str(out)]
    )
    error = capsys.readouterr().err.strip().splitlines()
    assert code == 2, error
    assert error[-1].startswith("lmms_eval: --model_args pretrained=..: lmms-eval names the results folder")
    assert sorted(path.name for path in tmp_path.rglob("*")) == []  # nothing written, in or outside


# ---- prepare: one call per folder, a manifest that describes its rows -------------------------------------


def _annotations(tmp_path: Path, name: str, questions: list[str]) -> tuple[Path, Path]:
    images = tmp_path / "img"
    images.mkdir(exist_ok=True)
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (9, 90, 200)).save(buffer, format="JPEG")
    (images / "7.jpg").write_bytes(buffer.getvalue())
    entries = [
        {"image": "7.jpg", "image_id": 7, "question": question, "question_id": index, "answer": index,
         "issimple": True, "data_source": "amt"}
        for index, question in enumerate(questions)
    ]  # fmt: skip
    path = tmp_path / name
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path, images


def test_a_second_prepare_into_a_folder_being_prepared_is_refused(tmp_path: Path, capsys) -> None:
    import fcntl

    from lmms_eval_tasks.cli import main as cli_main

    annotations, images = _annotations(tmp_path, "a.json", ["How many dogs?"])
    out = tmp_path / "data" / "tallyqa"
    out.parent.mkdir()
    with open(out.parent / ".tallyqa.prepare.lock", "a+") as lock:  # another prepare holds the folder
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        code = cli_main(
            ["prepare", "tallyqa", "--annotations", str(annotations), "--images", str(images)]
            + ["--out", str(out)]
        )
    error = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress bars: the one line
    assert code == 2, error
    assert f"{out} is being prepared by another `lmms-eval-tasks prepare`" in error
    assert not out.exists() and not list(out.parent.glob(".tallyqa.partial*"))


def test_a_manifest_over_other_rows_is_refused_on_load(tmp_path: Path, monkeypatch) -> None:
    first, images = _annotations(tmp_path, "first.json", ["How many dogs?", "How many cats?"])
    second, _ = _annotations(tmp_path, "second.json", ["How many birds?", "How many cows?"])
    preparers()["tallyqa"].prepare(first, images, tmp_path / "one", progress=False)
    preparers()["tallyqa"].prepare(second, images, tmp_path / "two", progress=False)
    manifest = "lmms_eval_tasks_prepare.json"
    (tmp_path / "one" / manifest).write_bytes((tmp_path / "two" / manifest).read_bytes())  # the mixed folder
    monkeypatch.setenv(env_var("tallyqa"), str(tmp_path / "one"))
    with pytest.raises(ValueError, match=r"its manifest .* does not describe its 2 rows .* --overwrite"):
        load_prepared("tallyqa")
    monkeypatch.setenv(env_var("tallyqa"), str(tmp_path / "two"))
    assert load_prepared("tallyqa")["question"] == ["How many birds?", "How many cows?"]
    assert not list(tmp_path.glob(".*partial*"))


@pytest.mark.parametrize("damaged", ['{"kind": "tallyqa", ', "[]"], ids=["cut short", "not an object"])
def test_a_damaged_manifest_is_one_line(tmp_path: Path, monkeypatch, damaged: str) -> None:
    # was json.JSONDecodeError "Expecting value: line 1 column 21 (char 20)" naming no file, or an
    # AttributeError ('list' object has no attribute 'get')
    first, images = _annotations(tmp_path, "first.json", ["How many dogs?"])
    preparers()["tallyqa"].prepare(first, images, tmp_path / "one", progress=False)
    (tmp_path / "one" / "lmms_eval_tasks_prepare.json").write_text(damaged, encoding="utf-8")
    monkeypatch.setenv(env_var("tallyqa"), str(tmp_path / "one"))
    with pytest.raises(
        ValueError, match=r"one: its manifest lmms_eval_tasks_prepare.json is damaged \(.*--overwrite$"
    ):
        load_prepared("tallyqa")


def test_prepare_into_a_symlinked_folder_fills_the_folder_it_points_to(tmp_path: Path, monkeypatch) -> None:
    # an --out that is a symlink used to end on "OSError: Cannot call rmtree on a symbolic link"
    first, images = _annotations(tmp_path, "first.json", ["How many dogs?"])
    second, _ = _annotations(tmp_path, "second.json", ["How many cats?", "How many cows?"])
    real = tmp_path / "disk" / "tallyqa"
    real.mkdir(parents=True)
    link = tmp_path / "tallyqa"
    link.symlink_to(real)
    preparers()["tallyqa"].prepare(first, images, link, progress=False)
    preparers()["tallyqa"].prepare(second, images, link, progress=False, overwrite=True)
    assert link.is_symlink() and (real / "lmms_eval_tasks_prepare.json").is_file()
    monkeypatch.setenv(env_var("tallyqa"), str(link))
    assert load_prepared("tallyqa")["question"] == ["How many cats?", "How many cows?"]
    assert sorted(path.name for path in (tmp_path / "disk").iterdir()) == [".tallyqa.prepare.lock", "tallyqa"]


def test_contextual_prepare_takes_the_folder_lock(tmp_path: Path) -> None:
    # two ConTextual prepares into one folder wrote one "<stem>.parquet.tmp" at once
    import fcntl

    from lmms_eval_tasks.tasks.contextual.prepare import prepare

    out = tmp_path / "contextual"
    with open(tmp_path / ".contextual.prepare.lock", "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        with pytest.raises(FileExistsError, match="is being prepared by another `lmms-eval-tasks prepare`"):
            prepare(None, out, split="val", download=False, progress=False)
    assert not out.exists()


# ---- latest.json ---------------------------------------------------------------------------------------


def _report(task: str, when: str) -> dict:
    from lmms_eval_tasks.reporting.schema import build_report

    report = build_report(benchmark="tallyqa", task=task, metrics={"accuracy": 50.0})
    report["provenance"]["timestamp"] = when
    return report


def test_a_damaged_latest_index_is_kept_aside_and_rebuilt(tmp_path: Path) -> None:
    from loguru import logger

    from lmms_eval_tasks.reporting.schema import write_report_files

    pack = tmp_path / "lmms_eval_tasks"
    write_report_files(pack / "run1", _report("tallyqa_sample", "2026-01-01T00:00:00Z"), [{"question_id": 1}])
    write_report_files(pack / "run2", _report("dvqa_sample", "2026-01-02T00:00:00Z"), [{"question_id": 2}])
    write_report_files(pack / "run2", _report("tallyqa_sample", "2026-01-02T00:00:00Z"))
    (pack / "latest.json").write_text('{"tasks": {"tallyqa_sample": ', encoding="utf-8")  # cut short
    warnings: list[str] = []
    sink = logger.add(lambda message: warnings.append(str(message)), level="WARNING")
    try:
        write_report_files(pack / "run3", _report("tdiuc_sample", "2026-01-03T00:00:00Z"))
    finally:
        logger.remove(sink)
    index = json.loads((pack / "latest.json").read_text(encoding="utf-8"))["tasks"]
    assert sorted(index) == ["dvqa_sample", "tallyqa_sample", "tdiuc_sample"]  # nobody's entry dropped
    assert index["tallyqa_sample"]["run_id"] == "run2" and index["dvqa_sample"]["samples"].startswith("run2/")
    (aside,) = pack.glob("latest.json.damaged-*")
    assert aside.read_text(encoding="utf-8") == '{"tasks": {"tallyqa_sample": '
    assert len(warnings) == 1 and "damaged" in warnings[0] and aside.name in warnings[0]


@pytest.mark.parametrize(
    "damaged",
    ["", "[]", '{"tasks": null}', '{"tasks": {"tallyqa_sample": "run1"}}', "\udcff"],
    ids=["empty", "a list", "null tasks", "an entry without its files", "not UTF-8"],
)
def test_a_damaged_latest_index_is_read_past_and_rebuilt_whatever_the_damage(
    tmp_path: Path, damaged: str
) -> None:
    # '{"tasks": null}' made every lookup end on AttributeError; an entry that names no file was kept as
    # it was (other tasks' entries stayed lost); any damage made the lookup say "no report"
    from lmms_eval_tasks.reporting.schema import latest_report_path, task_files, write_report_files

    pack = tmp_path / "lmms_eval_tasks"
    write_report_files(pack / "run1", _report("tallyqa_sample", "2026-01-01T00:00:00Z"))
    write_report_files(pack / "run2", _report("dvqa_sample", "2026-01-02T00:00:00Z"))
    (pack / "latest.json").write_bytes(damaged.encode("utf-8", "surrogateescape"))
    assert latest_report_path(tmp_path, "tallyqa_sample") == pack / "run1" / "tallyqa_sample_report.json"
    assert task_files(tmp_path, "dvqa_sample")["report"] == pack / "run2" / "dvqa_sample_report.json"
    write_report_files(pack / "run3", _report("tdiuc_sample", "2026-01-03T00:00:00Z"))
    index = json.loads((pack / "latest.json").read_text(encoding="utf-8"))["tasks"]
    assert {task: entry["run_id"] for task, entry in index.items()} == {
        "dvqa_sample": "run2", "tallyqa_sample": "run1", "tdiuc_sample": "run3"
    }  # fmt: skip
    assert len(list(pack.glob("latest.json.damaged-*"))) == 1


def test_an_entry_whose_run_folder_was_deleted_falls_back_to_the_newest_report_left(tmp_path: Path) -> None:
    # the index named run2's report after run2 was deleted by hand: lookups gave a file that does not exist
    import shutil

    from loguru import logger

    from lmms_eval_tasks.reporting.schema import latest_report_path, task_files, write_report_files

    pack = tmp_path / "lmms_eval_tasks"
    write_report_files(pack / "run1", _report("tallyqa_sample", "2026-01-01T00:00:00Z"), [{"question_id": 1}])
    write_report_files(pack / "run2", _report("tallyqa_sample", "2026-01-02T00:00:00Z"))
    shutil.rmtree(pack / "run2")
    warnings: list[str] = []
    sink = logger.add(lambda message: warnings.append(str(message)), level="WARNING")
    try:
        assert latest_report_path(tmp_path, "tallyqa_sample") == pack / "run1" / "tallyqa_sample_report.json"
        samples = task_files(tmp_path, "tallyqa_sample")["samples"]
        assert samples == pack / "run1" / "tallyqa_sample_samples.jsonl"
        shutil.rmtree(pack / "run1")
        assert latest_report_path(tmp_path, "tallyqa_sample") is None
    finally:
        logger.remove(sink)
    assert "no longer exists; the newest left is in run1" in warnings[0], warnings
    assert "no longer exists; no other report of it is left" in warnings[-1], warnings


# ---- interrupted writes -------------------------------------------------------------------------------


def test_sigterm_during_a_report_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys, time
        from pathlib import Path
        from lmms_eval_tasks.host import launcher  # noqa: F401 (the launcher's module loads as in a run)
        from lmms_eval_tasks.host.termination import end_on_sigterm_with_cleanup
        from lmms_eval_tasks.reporting import schema

        end_on_sigterm_with_cleanup()
        real_replace = os.replace

        def slow_replace(source, target):
            print("writing", flush=True)
            time.sleep(60)
            real_replace(source, target)

        schema.os.replace = slow_replace
        schema.write_atomically(Path({str(tmp_path)!r}) / "task_report.json", "{{}}")
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    line = child.stdout.readline()
    assert line.strip() == "writing", child.stderr.read()
    assert list(tmp_path.glob("*.tmp"))  # the write is under way
    child.send_signal(signal.SIGTERM)
    start = time.monotonic()
    child.wait(timeout=30)
    assert time.monotonic() - start < 30
    assert child.returncode == 128 + signal.SIGTERM, child.stderr.read()
    assert list(tmp_path.iterdir()) == []  # neither the report nor its temporary file


def test_sigterm_during_prepare_leaves_no_staging_folder(tmp_path: Path) -> None:
    # the lmms-eval-tasks command kept Python's default SIGTERM action: a prepare killed while staging left
    # its ".<out>.partial-*" folder (a score run its report's .tmp) next to the output
    first, images = _annotations(tmp_path, "first.json", ["How many dogs?"])
    script = textwrap.dedent(
        f"""
        import sys, time
        import datasets
        from lmms_eval_tasks import cli

        real_save = datasets.DatasetDict.save_to_disk

        def slow_save(self, path, **kwargs):
            real_save(self, path, **kwargs)
            print("staged", flush=True)
            time.sleep(60)

        datasets.DatasetDict.save_to_disk = slow_save
        sys.argv = ["lmms-eval-tasks", "prepare", "tallyqa", "--annotations", {str(first)!r},
                    "--images", {str(images)!r}, "--out", {str(tmp_path / "out")!r}]
        cli.run()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    line = child.stdout.readline()
    assert line.strip() == "staged", child.stderr.read()
    assert list(tmp_path.glob(".out.partial-*"))  # the staging folder is there
    child.send_signal(signal.SIGTERM)
    child.wait(timeout=30)
    assert child.returncode == 128 + signal.SIGTERM, child.stderr.read()
    assert not list(tmp_path.glob(".out.partial-*")) and not (tmp_path / "out").exists()


def test_report_tells_an_interrupted_write_from_a_failed_scoring(tmp_path: Path, monkeypatch) -> None:
    from lmms_eval_tasks.framework import task_pipeline
    from lmms_eval_tasks.framework.registry import get_benchmark
    from lmms_eval_tasks.human_report import _pending_notes
    from lmms_eval_tasks.tasks.tallyqa.hooks import HOOKS

    records = [dict(record) for record in get_benchmark("tallyqa").record_schema.example]
    args = argparse.Namespace(model="random_guess", model_args="", limit=None, output_path=None)

    def interrupted(*_args, **_kwargs):
        raise SystemExit(143)  # SIGTERM, as the launcher's handler raises it, while the report is written

    monkeypatch.setattr(task_pipeline, "write_task_files", interrupted)
    with pytest.raises(SystemExit):
        task_pipeline.score_and_report(HOOKS, records, "tallyqa_sample", args, folder=tmp_path)
    (note,) = _pending_notes(tmp_path)
    assert "tallyqa_sample: no report, writing the report interrupted" in note, note
    assert "scoring failed" not in note
    marker = json.loads((tmp_path / "tallyqa_sample_pending.json").read_text(encoding="utf-8"))
    assert marker["failed_step"] == "writing the report"
