"""`make demo` as a newcomer reads it: it ends with what it showed (stand-in models, meaningless numbers) and
three next steps, says so in summary.md and the report, and a rerun prints one line about older runs."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    assert demo.WHAT_IT_SHOWS in (tmp_path / "demo" / "report" / "report.md").read_text(encoding="utf-8")

    assert demo.main(arguments) == 0  # the same output folder: every report now has an older twin
    second = capfd.readouterr()
    logged = second.out + second.err  # loguru's sink is stderr, or stdout once the host's CLI reconfigured it
    assert "an older run of the same model" not in logged  # was one line per file (204 in a full demo)
    older = [line for line in logged.splitlines() if "report(s) of older runs" in line]
    assert len(older) == 2, older  # one per model folder
