"""Run state: the run_context host patch records each run's context where the host makes it; groups read
their members' records from that run's state, never from another run's."""

from __future__ import annotations

import inspect
import json
import math
import threading
from argparse import Namespace
from pathlib import Path

import pytest

from lmms_eval_tasks.framework import hook_factory, run_state
from lmms_eval_tasks.host import integration
from lmms_eval_tasks.host import patches as host
from lmms_eval_tasks.tasks.dare import task_docs as dare_docs
from tests.dare.test_dare_tasks import _records

PACKAGE = Path(hook_factory.__file__).resolve().parents[1]


def test_no_stack_frame_walks_in_the_package() -> None:
    # The report once found its run id by reading a host function's local variable from the call stack:
    # a host rename would have unpaired reports and results silently.
    offenders = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_getframe" in path.read_text(encoding="utf-8") or "f_locals" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_the_run_context_patch_wraps_where_the_host_makes_the_run_id() -> None:
    import lmms_eval.__main__ as host_main
    import lmms_eval.evaluator as evaluator

    status = host.apply_patch("run_context")
    assert status.state == "applied", status
    assert getattr(evaluator.simple_evaluate, "_lmms_eval_tasks_fix", False)
    # what the probe relies on, read from the installed host: the CLI makes datetime_str and hands it over
    source = inspect.getsource(host_main.cli_evaluate_single)
    assert "datetime_str = utils.get_datetime_str(" in source
    assert "cli_args=args" in source and "datetime_str=datetime_str" in source


def test_the_patched_simple_evaluate_opens_and_closes_the_runs_state(monkeypatch: pytest.MonkeyPatch) -> None:
    import lmms_eval.evaluator as evaluator

    seen: list[run_state.RunState] = []

    def fake_simple_evaluate(model, cli_args=None, datetime_str: str = "", **kwargs):  # the host's names
        seen.append(run_state.current_run(cli_args))
        return {"results": {}}

    monkeypatch.setattr(evaluator, "simple_evaluate", fake_simple_evaluate)  # restored after the test
    integration.install_run_context()
    args = Namespace(output_path=None)
    assert evaluator.simple_evaluate(model="dummy", cli_args=args, datetime_str="20261201_081530") == {
        "results": {}
    }
    (state,) = seen
    assert state.host and state.args is args and state.run_id == "20261201_081530"
    assert run_state.current_run(args) is not state  # closed when the evaluation returned
    assert not run_state.current_run(args).host


def test_a_groups_records_come_from_its_own_run(tmp_path: Path) -> None:
    """Run A scores dare_single_gen_p1 (2 of 2 right); run B scores p2 (1 of 2) and p3 (0 of 2):
    B's group sees only B's records: (50 + 0) / 2 = 25, not (100 + 50 + 0) / 3 = 50."""
    answers = {"q1": ["1"], "q2": ["2"]}

    def records(task: str, outputs: dict[str, str]) -> list[dict]:
        return _records(task, outputs, answers)  # DARE's own test records: option A is "1", B is "2"

    run_a = Namespace(output_path=str(tmp_path / "a"), model="random_guess", model_args="seed=0", limit=None)
    run_b = Namespace(output_path=str(tmp_path / "b"), model="random_guess", model_args="seed=0", limit=None)
    accuracy = dare_docs.aggregate_single_accuracy
    with run_state.host_run(run_a, "20261201_080000"):
        assert accuracy(records("dare_single_gen_p1", {"q1": "A", "q2": "B"}), args=run_a) == 100.0
    with run_state.host_run(run_b, "20261201_090000") as state_b:
        assert accuracy(records("dare_single_gen_p2", {"q1": "A", "q2": "C"}), args=run_b) == 50.0
        assert accuracy(records("dare_single_gen_p3", {"q1": "D", "q2": "C"}), args=run_b) == 0.0
        kept = state_b.records_of(["dare_single_gen_p1", "dare_single_gen_p2", "dare_single_gen_p3"])
        assert list(kept) == ["dare_single_gen_p2", "dare_single_gen_p3"]
        group_value = dare_docs.aggregate_dare_gen_single_accuracy([math.nan] * 2, [2, 2], False)
        # the group's Stderr the host's table shows (patch group_only_metrics) is this run's own scoring's
        report_path = tmp_path / "b" / "lmms_eval_tasks" / "20261201_090000" / "dare_gen_report.json"
        group_report = json.loads(report_path.read_text(encoding="utf-8"))
        assert state_b.group_stderr("dare_gen", "single_accuracy") == group_report["metrics"].get(
            "single_accuracy_stderr", "N/A"
        )
        assert state_b.group_stderr("dare_gen", "no_such_metric") is None
        assert state_b.group_stderr("dare_p1", "single_accuracy") is None  # not scored in this run
    assert group_value == 25.0
    group_folder = tmp_path / "b" / "lmms_eval_tasks" / "20261201_090000"
    assert (group_folder / "dare_gen_report.json").is_file()  # filed under run B's host run id
    # nothing lost for groups: the union (2 + 2 records) was saved under the group's name, marker removed
    saved = (group_folder / "dare_gen_samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(saved) == 4 and not (group_folder / "dare_gen_pending.json").exists()
    assert not (tmp_path / "a" / "lmms_eval_tasks" / "20261201_080000" / "dare_gen_report.json").exists()


def test_a_group_without_member_records_is_nan() -> None:
    with run_state.host_run(Namespace(output_path=None), "20261201_100000"):
        assert math.isnan(dare_docs.aggregate_dare_gen_single_accuracy([], [], False))


def test_records_are_kept_safely_from_many_threads() -> None:
    state = run_state.RunState()
    threads = [
        threading.Thread(target=state.add_records, args=(f"task{index}", [{"index": index}]))
        for index in range(64)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    kept = state.records_of([f"task{index}" for index in range(64)])
    assert [records[0]["index"] for records in kept.values()] == list(range(64))


def test_a_tasks_records_are_scored_once_per_run() -> None:
    calls: list[int] = []
    records = [{"id": 1}, {"id": 2}]

    def compute(items):
        calls.append(len(items))
        return {"accuracy": 50.0}

    first, second = run_state.RunState(), run_state.RunState()
    assert first.score_once("t", records, compute) == {"accuracy": 50.0}
    assert first.score_once("t", records, compute) == {"accuracy": 50.0}  # the host's second metric key
    assert calls == [2]
    first.score_once("t", [{"id": 1}, {"id": 2}], compute)  # other record objects: scored again
    second.score_once("t", records, compute)  # another run: scored again
    assert calls == [2, 2, 2]
    assert first.scored("t", records) == {"accuracy": 50.0}
    assert second.scored("t", [{"id": 1}]) is None  # a lookup computes and keeps nothing


def test_a_failed_scoring_is_computed_once_and_has_no_scores() -> None:
    calls: list[int] = []
    records = [{"id": 1}]

    def compute(items):
        calls.append(len(items))
        raise RuntimeError("judge unreachable")

    state = run_state.RunState()
    for _ in range(3):  # the host's three metric keys: one judging attempt, the same error each time
        with pytest.raises(RuntimeError, match="judge unreachable"):
            state.score_once("t", records, compute)
    assert calls == [1]
    assert state.scored("t", records) is None  # pack_stderr then shows N/A


def test_group_stderr_reads_the_groups_metrics() -> None:
    state = run_state.RunState()
    state.set_group_metrics("g", {"accuracy": 50.0, "accuracy_stderr": 12.5, "drop": 3.0, "flag": True})
    assert state.group_stderr("g", "accuracy") == 12.5
    assert state.group_stderr("g", "drop") == "N/A"  # scored, but no standard error
    assert state.group_stderr("g", "missing") is None and state.group_stderr("other", "accuracy") is None
