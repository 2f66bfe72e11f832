"""The launcher refuses a `--model` whose wrapper cannot run here, before any task is built (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmms_eval_tasks.host.launcher import check_models
from tests.helpers import offline_environment, run_launcher

pytestmark = pytest.mark.slow

TASK_BUILT = "Building contexts for hallusionbench_sample"  # the host's log line once a task's data is loaded


def _timed_run(*arguments: str, **extra: str):
    """The run, its process's CPU seconds and its wall seconds (forked from the warm launcher: the host's
    import, the same in both runs, is not counted; what the refused run skips is)."""
    completed = run_launcher(*arguments, environment=offline_environment(**extra), timeout=600)
    return completed, completed.cpu_seconds, completed.wall_seconds


def test_model_llava_stops_before_any_dataset_with_both_ways_out(tmp_path: Path) -> None:
    """The card's command on a sample task, where the original LLaVA code is not installed, with the opt-out.

    A control run of the same task with the pack's baseline shows the host's task-building log line and
    costs more CPU; the refused run shows neither and writes nothing.
    """
    refused_output, control_output = tmp_path / "llava", tmp_path / "control"
    refused, refused_cpu, refused_wall = _timed_run(
        "--model", "llava", "--tasks", "hallusionbench_sample", "--output_path", str(refused_output),
        LMMS_EVAL_TASKS_NO_SUBSTITUTION="1",  # without it the pack serves llava (tests/test_card_command.py)
    )  # fmt: skip
    log = refused.stdout + refused.stderr
    assert refused.returncode == 2, log[-3000:]
    assert "lmms_eval: --model llava cannot run on this machine" in refused.stderr
    assert "No module named 'llava'" in refused.stderr
    assert "--model llava_hf --model_args pretrained=llava-hf/llava-1.5-7b-hf" in refused.stderr
    assert "haotian-liu/LLaVA" in refused.stderr and "transformers==4.37.2" in refused.stderr
    assert "NameError" not in log and TASK_BUILT not in log
    assert not refused_output.exists()
    assert refused_wall < 120  # seconds on a loaded 2-core machine; about 2 s of CPU forked warm

    control, control_cpu, _ = _timed_run(
        "--model", "random_guess", "--tasks", "hallusionbench_sample", "--limit", "4",
        "--output_path", str(control_output), "--verbosity", "INFO",
    )  # fmt: skip
    assert control.returncode == 0, control.stderr[-3000:]
    assert TASK_BUILT in control.stdout + control.stderr
    assert refused_cpu < control_cpu


def test_skip_switch_and_models_that_run(monkeypatch: pytest.MonkeyPatch) -> None:
    arguments = ["--model", "llava", "--tasks", "x", "--model_args", "pretrained=liuhaotian/llava-v1.5-13b"]
    message = check_models(arguments)
    assert message is not None and "pretrained=llava-hf/llava-1.5-13b-hf" in message
    assert check_models(["--model", "random_guess", "--tasks", "x"]) is None
    assert check_models(["--model=llava_hf", "--tasks", "x"]) is None
    unknown = check_models(["--model", "no_such_model", "--tasks", "x"])
    assert unknown is not None and "unknown model 'no_such_model'" in unknown
    monkeypatch.setenv("LMMS_EVAL_TASKS_SKIP_MODEL_CHECK", "1")
    assert check_models(["--model", "llava", "--tasks", "x"]) is None


def test_models_named_in_a_config_file_are_checked(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("- model: random_guess\n  tasks: x\n- model: llava\n  tasks: x\n", encoding="utf-8")
    message = check_models(["--config", str(config)])
    assert message is not None and message.count("cannot run on this machine") == 1
    assert "--model llava " in message


def test_a_misspelt_model_is_one_line_with_the_closest_names() -> None:
    """`--model random_gues` said the host's wrapper "(not found)" cannot be imported, "see the host's
    documentation of this model", and ended with the skip switch: neither the cause nor the fix last."""
    message = check_models(["--model", "random_gues", "--tasks", "x"])
    assert message is not None and len(message.splitlines()) == 1, message
    assert message.startswith("lmms_eval: unknown model 'random_gues' (did you mean random_guess"), message
    assert "lmms-eval-tasks doctor --all-models" in message and "cannot be imported" not in message
    nothing_close = check_models(["--model", "zzzzzzzz", "--tasks", "x"])
    assert nothing_close is not None and "did you mean" not in nothing_close
    assert nothing_close.startswith("lmms_eval: unknown model 'zzzzzzzz': ")


def test_model_args_that_are_not_key_value_are_one_line_before_the_host_runs() -> None:
    """`--model_args seed` ended with the host's "ValueError: not enough values to unpack (expected 2, got
    1)" after a traceback, naming neither the flag nor the fix."""
    from lmms_eval_tasks.host.argument_checks import check_model_args

    message = check_model_args(["--model", "random_guess", "--model_args", "seed", "--tasks", "x"])
    assert message == (
        "lmms_eval: --model_args 'seed': 'seed' is not KEY=VALUE; give comma-separated KEY=VALUE pairs, "
        "e.g. --model_args pretrained=llava-hf/llava-1.5-7b-hf,device=cuda"
    )
    assert check_model_args(["--model", "x", "--model_args", "pretrained=a,=b"]).startswith(
        "lmms_eval: --model_args 'pretrained=a,=b': '=b' is not KEY=VALUE"
    )
    for fine in ("seed=0", "seed=0,", "a=1,,b=2", "a=b=c"):
        assert check_model_args(["--model", "x", "--model_args", fine]) is None, fine
    assert check_model_args(["--model", "x"]) is None
