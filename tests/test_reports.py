"""The pack report schema: strict JSON, validation errors, redaction, per-run folders and the rerun rule."""

from __future__ import annotations

import json
import math
from argparse import Namespace
from pathlib import Path

import pytest

from lmms_eval_tasks import __version__
from lmms_eval_tasks.framework import run_state, task_pipeline
from lmms_eval_tasks.reporting import schema as reports
from lmms_eval_tasks.reporting.schema import (
    ReportError,
    build_report,
    read_report,
    strict_loads,
    validate_report,
)


def _args(output: Path, **extra) -> Namespace:
    """The host's CLI namespace as an aggregation receives it (only the fields the reports read)."""
    values = {
        "output_path": str(output),
        "model": "random_guess",
        "model_args": "seed=0",
        "seed": [0, 1234, 1234, None],
        "limit": None,
    }
    values.update(extra)
    return Namespace(**values)


@pytest.fixture
def host_run():
    """``host_run(args, datetime_str)`` opens a host evaluation's run state as the run_context patch does."""
    opened: list[run_state.RunState] = []

    def open_run(args: Namespace, datetime_str: str) -> Namespace:
        opened.append(run_state.begin_run(args, datetime_str))
        return args

    yield open_run
    for state in opened:
        run_state.end_run(state)


def _report(args: Namespace | None, task: str = "toy_task", **metrics) -> dict:
    return build_report(
        benchmark="toy",
        task=task,
        metrics=metrics or {"accuracy": 50.0},
        args=args,
        details={"table": {"all": {"acc": 50.0}}},
    )


def test_non_finite_values_are_written_as_null_and_parse_strictly(tmp_path: Path) -> None:
    args = _args(tmp_path)
    report = build_report(
        benchmark="toy",
        task="toy_task",
        metrics={"accuracy": 50.0, "std": math.nan, "ratio": math.inf, "count": 3, "rule": True},
        args=args,
        details={"per_repeat": [{"acc": -math.inf}], "labels": ("a", "b")},
    )
    assert report["metrics"] == {"accuracy": 50.0, "std": None, "ratio": None, "count": 3, "rule": True}
    samples = [{"id": 1, "losses": [1.5, math.nan, -math.inf]}]
    path = task_pipeline.write_report(args, "toy_task", report, samples)
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    loaded = strict_loads(text)
    assert loaded["details"] == {"per_repeat": [{"acc": None}], "labels": ["a", "b"]}
    samples_path = path.parent / "toy_task_samples.jsonl"
    assert [strict_loads(line) for line in samples_path.read_text().splitlines()] == [
        {"id": 1, "losses": [1.5, None, None]}
    ]
    assert samples[0]["losses"][1] != samples[0]["losses"][1]  # the caller's records are not modified
    assert read_report(path) == loaded
    with pytest.raises(ValueError, match="NaN"):
        strict_loads('{"a": NaN}')


def test_provenance_records_who_and_how(tmp_path: Path) -> None:
    args = _args(tmp_path, limit=5, seed=[7, None, 8, 9])
    report = _report(args)
    provenance = report["provenance"]
    assert provenance["pack_version"] == __version__
    assert provenance["host_version"] == "0.7.3"  # the installed lmms-eval
    assert (provenance["model"], provenance["model_args"], provenance["task"]) == (
        "random_guess",
        "seed=0",
        "toy_task",
    )
    assert provenance["seeds"] == {"host": {"random": 7, "numpy": None, "torch": 8, "fewshot": 9}, "pack": {}}
    assert provenance["limit"] == 5
    assert provenance["deviations"][0].startswith("--limit 5:")
    assert provenance["judge"] is None and provenance["corruption"] is None
    assert provenance["timestamp"].endswith("Z") and len(provenance["timestamp"]) == 20
    assert isinstance(provenance["command_line"], list)
    # the host's --seed string form and a single integer are read the same way
    expected = {"random": 1, "numpy": None, "torch": 2, "fewshot": 3}
    assert reports.host_seeds(Namespace(seed="1,None,2,3")) == expected
    assert reports.host_seeds(Namespace(seed=42)) == dict.fromkeys(reports.HOST_SEED_NAMES, 42)


def test_secrets_in_model_args_and_command_line_are_redacted(tmp_path: Path, monkeypatch) -> None:
    secret = "sk-proj-abcdefghijklmnop0123"
    token = "hf_zyxwvutsrqponm987"
    model_args = f"pretrained=org/model,api_key={secret},hf_token={token},tokenizer=org/tok,max_new_tokens=8"
    monkeypatch.setattr(
        "sys.argv",
        ["lmms_eval", "--model_args", model_args, "--api_key", "plain-secret-value", "--limit", "2"],
    )
    args = _args(tmp_path, model="openai_compatible", model_args=model_args)
    report = _report(args)
    text = json.dumps(report)
    assert secret not in text and token not in text and "plain-secret-value" not in text
    assert report["provenance"]["model_args"] == (
        "pretrained=org/model,api_key=[REDACTED],hf_token=[REDACTED],tokenizer=org/tok,max_new_tokens=8"
    )
    assert report["provenance"]["command_line"] == [
        "lmms_eval",
        "--model_args",
        report["provenance"]["model_args"],
        "--api_key",
        "[REDACTED]",
        "--limit",
        "2",
    ]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.update(schema_version=2), r"report\.schema_version: expected 1"),
        (lambda r: r.pop("warnings"), r"missing field\(s\) \['warnings'\]"),
        (lambda r: r.update(extra=1), r"unknown field\(s\) \['extra'\]"),
        (lambda r: r["metrics"].update(acc=math.nan), r"report\.metrics\.acc: expected a finite number"),
        (lambda r: r["metrics"].update(table={"a": 1}), r"report\.metrics\.table"),
        (lambda r: r["provenance"].pop("seeds"), r"report\.provenance: missing field\(s\) \['seeds'\]"),
        (lambda r: r["provenance"].update(timestamp="2026-12-01 00:00"), r"report\.provenance\.timestamp"),
        (lambda r: r["provenance"].update(task="other"), r"report\.provenance\.task"),
        (lambda r: r["provenance"].update(judge={"model": "x"}), r"report\.provenance\.judge"),
        (lambda r: r["provenance"].update(deviations="none"), r"report\.provenance\.deviations"),
        (lambda r: r.update(warnings=[1]), r"report\.warnings"),
    ],
)
def test_validator_names_the_bad_field(tmp_path: Path, change, message: str) -> None:
    report = _report(_args(tmp_path))
    validate_report(report)
    change(report)
    with pytest.raises(ReportError, match=message):
        validate_report(report)


def test_metrics_must_be_flat() -> None:
    with pytest.raises(ReportError, match=r"report\.metrics\.per_category: metrics are flat"):
        build_report(benchmark="toy", task="t", metrics={"per_category": {"a": 1.0}})


def test_read_report_rejects_non_standard_json(tmp_path: Path) -> None:
    path = tmp_path / "bad_report.json"
    report = _report(None)
    path.write_text(json.dumps(report).replace('"accuracy": 50.0', '"accuracy": NaN'))
    with pytest.raises(ReportError, match=r"bad_report\.json: not a readable strict-JSON report"):
        read_report(path)


def test_layout_follows_the_hosts_per_model_folders(tmp_path: Path, host_run) -> None:
    random_args = host_run(_args(tmp_path), "20261201_081530")
    llava_args = host_run(
        _args(tmp_path, model="llava_hf", model_args="pretrained=llava-hf/llava-1.5-7b-hf,device=cpu"),
        "20261201_081530",
    )
    random_path = task_pipeline.write_report(random_args, "toy_task", _report(random_args))
    llava_path = task_pipeline.write_report(llava_args, "toy_task", _report(llava_args))
    # the host's folder names: none for random_guess (no pretrained=), "llava-hf__llava-1.5-7b-hf" for llava
    assert random_path == tmp_path / "lmms_eval_tasks" / "20261201_081530" / "toy_task_report.json"
    llava_folder = tmp_path / "llava-hf__llava-1.5-7b-hf" / "lmms_eval_tasks"
    assert llava_path == llava_folder / "20261201_081530" / "toy_task_report.json"
    assert read_report(random_path)["provenance"]["model"] == "random_guess"
    assert read_report(llava_path)["provenance"]["model"] == "llava_hf"
    assert read_report(llava_path)["provenance"]["run_id"] == "20261201_081530"
    assert reports.latest_report_path(tmp_path, "toy_task") == random_path
    assert reports.latest_report_path(tmp_path, "toy_task", "llava-hf__llava-1.5-7b-hf") == llava_path
    assert sorted(reports.iter_report_paths(tmp_path)) == sorted([random_path, llava_path])


def test_runs_never_share_a_folder(tmp_path: Path, host_run) -> None:
    """Two runs of the same model started in the same second (same host date id) keep their own files."""
    first = host_run(_args(tmp_path, model_args="seed=0"), "20261201_081530")
    second = host_run(_args(tmp_path, model_args="seed=1"), "20261201_081530")
    first_path = task_pipeline.write_report(first, "toy_task", _report(first))
    second_path = task_pipeline.write_report(second, "toy_task", _report(second))
    assert first_path.parent.name == "20261201_081530" and second_path.parent.name == "20261201_081530-2"
    # a second task of the first run joins the first run's folder
    other = task_pipeline.write_report(first, "toy_other", _report(first, task="toy_other"))
    assert other.parent == first_path.parent
    assert read_report(first_path)["provenance"]["model_args"] == "seed=0"
    assert read_report(second_path)["provenance"]["model_args"] == "seed=1"


def test_interrupted_rerun_leaves_the_previous_report_under_its_own_older_run(
    tmp_path: Path, host_run
) -> None:
    """Run A scores tasks t1 and t2. Rerun B scores t2, then dies before t1 is scored."""
    run_a = host_run(_args(tmp_path), "20261201_080000")
    a_t1 = task_pipeline.write_report(run_a, "t1", _report(run_a, task="t1", accuracy=10.0))
    a_t2 = task_pipeline.write_report(run_a, "t2", _report(run_a, task="t2", accuracy=20.0))
    run_b = host_run(_args(tmp_path), "20261201_090000")
    b_t2 = task_pipeline.write_report(run_b, "t2", _report(run_b, task="t2", accuracy=25.0))
    # ... run B is killed here: t1 is never scored in run B.
    assert b_t2.parent.name == "20261201_090000"
    assert not (b_t2.parent / "t1_report.json").exists()  # nothing in B's folder claims to be t1
    assert read_report(a_t1)["metrics"]["accuracy"] == 10.0  # A's files are intact
    assert read_report(a_t2)["metrics"]["accuracy"] == 20.0
    index = strict_loads((tmp_path / "lmms_eval_tasks" / "latest.json").read_text())
    assert index["tasks"]["t1"]["run_id"] == "20261201_080000"  # still the latest COMPLETE t1 report
    assert index["tasks"]["t2"]["run_id"] == "20261201_090000"
    assert reports.latest_report_path(tmp_path, "t1") == a_t1
    assert reports.latest_report_path(tmp_path, "t2") == b_t2


def test_a_failed_write_does_not_move_latest(tmp_path: Path, host_run) -> None:
    """latest.json moves only after the report and its samples are completely written."""
    run_a = host_run(_args(tmp_path), "20261201_080000")
    good = task_pipeline.write_report(run_a, "t1", _report(run_a, task="t1"), samples=[{"id": 1}])
    run_b = host_run(_args(tmp_path), "20261201_090000")

    class Unserialisable:
        def __str__(self) -> str:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        task_pipeline.write_report(run_b, "t1", _report(run_b, task="t1"), samples=[{"id": Unserialisable()}])
    assert reports.latest_report_path(tmp_path, "t1") == good
    assert [path.name for path in (tmp_path / "lmms_eval_tasks" / "20261201_090000").iterdir()] == []


def test_no_output_path_writes_nothing(tmp_path: Path) -> None:
    report = _report(None)
    assert report["provenance"]["model"] is None and report["provenance"]["command_line"] is None
    assert task_pipeline.write_report(None, "toy_task", report) is None
    assert task_pipeline.write_report(Namespace(output_path=None), "toy_task", report) is None
    with pytest.raises(ReportError, match="written as 'other'"):
        task_pipeline.write_report(_args(tmp_path), "other", report)
    with pytest.raises(ReportError, match="missing field"):
        task_pipeline.write_report(_args(tmp_path), "toy_task", {"schema_version": 1, "task": "toy_task"})


def test_task_files_from_any_folder_a_user_names(tmp_path: Path, host_run) -> None:
    args = host_run(_args(tmp_path), "20261201_080000")
    path = task_pipeline.write_report(args, "t1", _report(args, task="t1"), samples=[{"id": 1}])
    expected = {"report": path, "samples": path.parent / "t1_samples.jsonl"}
    for folder in (tmp_path, tmp_path / "lmms_eval_tasks", path.parent):
        assert reports.task_files(folder, "t1") == expected, folder
    assert reports.task_files(tmp_path, "t2") == {}
