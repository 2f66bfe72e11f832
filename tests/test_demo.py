"""`make demo` as a newcomer reads it: it ends with what it showed (stand-in models, meaningless numbers) and
three next steps, says so in summary.md and the report, and a rerun prints one line about older runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from loguru import logger

from lmms_eval_tasks import demo

pytestmark = pytest.mark.slow


def test_demo_ends_with_what_it_showed_and_three_next_steps_and_a_rerun_stays_quiet(
    tmp_path: Path, tiny_llava_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "demo"
    arguments = ["--output", str(output), "--tiny-llava", str(tiny_llava_dir), "--tasks", "dvqa_sample"]
    assert demo.main(arguments) == 0
    first = capfd.readouterr()
    lines = first.out.rstrip().splitlines()
    assert lines[-5].startswith("What this showed:") and "random guesser" in lines[-5]
    assert "untrained tiny LLaVA" in lines[-5] and "measure nothing" in lines[-5]
    assert lines[-4] == "Next steps for a real evaluation:"
    steps = [line.split(":")[0] for line in lines[-3:]]
    assert steps == ["  1. real data", "  2. a real model", "  3. a judge"]
    assert "lmms-eval-tasks prepare" in lines[-3] and "OPENAI_API_KEY" in lines[-1]
    assert Path(lines[-2].split("your own: ", 1)[1].rstrip(")")).is_file()  # a path that exists here
    summary = (tmp_path / "demo" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith(demo.WHAT_IT_SHOWS)
    # both runs forked from one process that imported the host once; each is its own process (own CPU time)
    recorded = json.loads((tmp_path / "demo" / "summary.json").read_text(encoding="utf-8"))
    assert recorded["host_import"]["import_cpu_seconds"] > 0
    assert all(recorded["runs"][label]["cpu_seconds"] > 0 for label in ("random_guess", "tiny_llava"))
    assert "the host was imported once for the runs" in first.out
    assert "lmms_eval.models.simple.llava_hf" in (output / "tiny_llava.log").read_text(encoding="utf-8")
    assert demo.WHAT_IT_SHOWS in (tmp_path / "demo" / "report" / "report.md").read_text(encoding="utf-8")

    results_files = sorted(output.rglob("*_results.json"))
    report_written = (output / "report" / "report.html").stat().st_mtime_ns

    assert demo.main(arguments) == 0  # unchanged inputs: the finished runs are reused, nothing runs again
    second = capfd.readouterr()
    reused = [
        line for line in second.out.splitlines() if "reused the finished run with the same inputs" in line
    ]
    assert [line.split(":")[0] for line in reused] == ["random_guess", "tiny_llava"]
    assert sorted(output.rglob("*_results.json")) == results_files  # no new run
    assert "(unchanged: the same runs)" in second.out
    assert (output / "report" / "report.html").stat().st_mtime_ns == report_written
    assert second.out.rstrip().splitlines()[-4] == "Next steps for a real evaluation:"

    # loguru's console sink may be a stream an earlier in-process host CLI run left behind (the host's CLI
    # re-adds sys.stdout as it was then), so the demo's warnings are read from a sink of the test's own
    messages: list[str] = []
    sink = logger.add(lambda message: messages.append(str(message)), level="WARNING", format="{message}")
    try:
        assert demo.main([*arguments, "--fresh"]) == 0  # the same folder: every report has an older twin
    finally:
        logger.remove(sink)
    third = capfd.readouterr()
    logged = third.out + third.err + "".join(messages)
    assert "an older run of the same model" not in logged  # was one line per file (204 in a full demo)
    older = [message for message in messages if "report(s) of older runs" in message]
    assert len(older) == 2, older  # one per model folder
    assert len(list(output.rglob("*_results.json"))) == 2 * len(results_files)


def test_a_changed_input_runs_the_model_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fingerprint covers the model's files, its arguments, the tasks and the LMMS_* settings."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    arguments = ["--model", "llava_hf", "--model_args", f"pretrained={model}"]
    first = demo.inputs_fingerprint(arguments, ["dvqa_sample"], 0, model)
    assert demo.inputs_fingerprint(arguments, ["dvqa_sample"], 0, model) == first
    assert demo.inputs_fingerprint(arguments, ["tdiuc_sample"], 0, model) != first
    assert demo.inputs_fingerprint(arguments, ["dvqa_sample"], 1, model) != first
    monkeypatch.setenv("LMMS_EVAL_TASKS_VRB_IMAGES", "3")
    assert demo.inputs_fingerprint(arguments, ["dvqa_sample"], 0, model) != first
    monkeypatch.delenv("LMMS_EVAL_TASKS_VRB_IMAGES")
    (model / "config.json").write_text('{"changed": 1}', encoding="utf-8")
    assert demo.inputs_fingerprint(arguments, ["dvqa_sample"], 0, model) != first
    folder = tmp_path / "run"
    folder.mkdir()
    results = folder / "x_results.json"
    results.write_text("{}", encoding="utf-8")
    (folder / demo.RUN_RECORD).write_text(
        f'{{"fingerprint": "{first}", "results_file": "{results}"}}', encoding="utf-8"
    )
    assert demo.finished_run(folder, first) == results
    assert demo.finished_run(folder, "another") is None
    results.unlink()
    assert demo.finished_run(folder, first) is None  # a record without its results file is no finished run
