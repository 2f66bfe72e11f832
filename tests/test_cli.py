"""The `lmms-eval-tasks` utility CLI: listing, the task folder, and the re-scoring dispatch and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.cli import main
from lmms_eval_tasks.framework.input_checks import RecordError, read_jsonl, require_field


def test_tasks_dir_prints_the_pack_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks-dir"]) == 0
    assert capsys.readouterr().out.strip() == str(TASKS_DIR)


def test_tasks_lists_each_task_with_a_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed, "no tasks listed"
    assert all(entry["description"] for entry in listed)
    assert {entry["kind"] for entry in listed} <= {"task", "group"}


def test_score_rejects_an_unknown_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text("{}\n")
    assert main(["score", "no_such_benchmark", str(records)]) == 2
    error = capsys.readouterr().err
    assert "no_such_benchmark" in error and "hallusionbench" in error


def test_score_reports_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "dare", str(tmp_path / "absent.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_score_names_the_line_of_malformed_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text('{"a": 1}\n\n{"a": 2,\n')
    assert main(["score", "dare", str(records)]) == 1
    assert "line 3" in capsys.readouterr().err


def test_score_rejects_an_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text("\n")
    assert main(["score", "hallusionbench", str(records)]) == 2
    [line] = capsys.readouterr().err.splitlines()  # said `record -: field '<file>'`
    assert line == (
        f"lmms-eval-tasks score: {records} is empty (no records): "
        "give the pack's <task>_samples.jsonl of a run"
    )


def _vqdv1_run(output: Path) -> tuple[Path, Path]:
    """A run's output as the launcher leaves it: the host's samples file next to the pack's run folder (the
    pack's files written by the pack's own writer, latest.json included). Returns (pack file, host file)."""
    from lmms_eval_tasks.framework.registry import get_benchmark
    from lmms_eval_tasks.reporting.schema import build_report, write_report_files

    records = [{**record, "task": "vqdv1_sample"} for record in get_benchmark("vqdv1").record_schema.example]
    report = build_report(benchmark="vqdv1", task="vqdv1_sample", metrics={"micro_f1": 0.5})
    write_report_files(output / "lmms_eval_tasks" / "20260101_000000", report, records)
    host_file = output / "20260101_000000_samples_vqdv1_sample.jsonl"
    host_file.write_text(
        "".join(
            json.dumps({"doc_id": index, "resps": [[r["prediction"]]], "filtered_resps": []}) + "\n"
            for index, r in enumerate(records)
        ),
        encoding="utf-8",
    )
    return output / "lmms_eval_tasks" / "20260101_000000" / "vqdv1_sample_samples.jsonl", host_file


def test_score_takes_a_run_folder_and_task_like_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack_file, _ = _vqdv1_run(tmp_path / "out")
    assert main(["score", "vqdv1", str(pack_file)]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert main(["score", "vqdv1", str(tmp_path / "out"), "--task", "vqdv1_sample"]) == 0
    assert json.loads(capsys.readouterr().out) == from_file
    assert main(["score", "vqdv1", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"lmms-eval-tasks score: {tmp_path / 'out'} is a folder: name the task with --task (tasks with "
        "records "
        "under it: vqdv1_sample)"
    )


def test_score_names_the_packs_file_for_the_hosts_samples_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack_file, host_file = _vqdv1_run(tmp_path / "out")
    assert main(["score", "vqdv1", str(host_file)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"lmms-eval-tasks score: {host_file} is the host's samples file (lmms-eval --log_samples); "
        "the pack's "
        f"records are in {pack_file}"
    )


def test_score_of_the_wrong_benchmark_names_the_records_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pack_file, _ = _vqdv1_run(tmp_path / "out")
    assert main(["score", "tdiuc", str(pack_file)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"lmms-eval-tasks score: {pack_file} holds records of task vqdv1_sample (benchmark vqdv1), "
        "not tdiuc: "
        f"run `lmms-eval-tasks score vqdv1 {pack_file}`"
    )


def test_read_jsonl_rejects_non_objects(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"ok": true}\n[1, 2]\n')
    with pytest.raises(RecordError, match="line 2"):
        read_jsonl(path)


def test_require_field_names_record_and_field() -> None:
    with pytest.raises(RecordError, match=r"record 7: field 'prediction': missing"):
        require_field({"id": "x"}, "prediction", 7)
    with pytest.raises(RecordError, match=r"record 0: field 'prompt': expected int, got str"):
        require_field({"prompt": "1"}, "prompt", 0, int)
    assert require_field({"prompt": 2}, "prompt", 0, int) == 2


def test_score_prints_strict_json_with_null_for_uncomputable_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One DARE single-correct record with prompt 1 only: the std over prompts is undefined (null, not NaN).
    record = {
        "id": "q1",
        "instance_id": 1,
        "category": "count",
        "setup": "single",
        "answer": ["B"],
        "A": "1",
        "B": "2",
        "C": "3",
        "D": "4",
        "format": "gen",
        "prompt": 1,
        "prediction": "B",
    }
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["score", "dare", str(path)]) == 0
    output = capsys.readouterr().out
    metrics = json.loads(output, parse_constant=lambda name: pytest.fail(f"non-strict JSON constant {name}"))
    assert metrics["single_accuracy"] == 100.0
    assert metrics["single_accuracy_std_over_prompts"] is None


def test_help_is_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    """`lmms-eval-tasks --help` printed the package's developer notes (register(subparsers), handlers)."""
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for developer_note in ("register(", "handler", "subparsers", "``", "One module per subcommand"):
        assert developer_note not in text, developer_note
    assert "lmms_eval --model" in text and "lmms-eval-tasks doctor" in text and "score" in text


def test_every_subcommands_help_is_for_users(capsys: pytest.CaptureFixture[str]) -> None:
    """Each `lmms-eval-tasks COMMAND --help` prints its module's docstring: it showed reST quotes (````),
    module paths (``lmms_eval_tasks.framework.preparing``), source files (``slim.py``) and repository paths
    (docs/vrb.md), none of which a pip install's user can open."""
    import re

    from lmms_eval_tasks.cli import build_parser

    commands = [action for action in build_parser()._subparsers._group_actions][0].choices
    found = []
    for name in commands:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        text = capsys.readouterr().out
        for note in re.findall(r"``|lmms_eval_tasks\.[a-z_.]+|\b[a-z_]+\.py\b|\bdocs/[a-z_-]+\.md", text):
            found.append(f"{name}: {note}")
    assert not found, found
