"""The card's command, `lmms_eval --tasks dare,hallusionbench --model llava`, without the original LLaVA code.

The launcher serves `--model llava` with the pack's LLaVA on transformers (`llava_transformers`): checkpoint
names map to their conversions, the host llava's model_args are honoured or refused by name, every pack
report records the substitution, `LMMS_EVAL_TASKS_NO_SUBSTITUTION=1` refuses instead, and `accelerate
launch` with two CPU processes gives the single-process numbers.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lmms_eval_tasks.host import substitution
from lmms_eval_tasks.host.substitution import SubstitutionError, check_model_args, resolve_checkpoint
from lmms_eval_tasks.reporting import model_substitution
from lmms_eval_tasks.reporting import schema as reports
from tests.helpers import (
    CARD_LOG_TASK,
    CARD_TASKS,
    REPO_ROOT,
    card_command_arguments,
    free_port,
    offline_environment,
    results_json,
    run_launcher,
    run_two_processes,
    samples_jsonl,
)

LOG_TASK = CARD_LOG_TASK
TASKS = CARD_TASKS


# ---- name mapping and model_args (fast) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("original", "converted"),
    [
        (None, "llava-hf/llava-1.5-7b-hf"),  # the host llava wrapper's default pretrained
        ("liuhaotian/llava-v1.5-7b", "llava-hf/llava-1.5-7b-hf"),
        ("liuhaotian/llava-v1.5-13b/", "llava-hf/llava-1.5-13b-hf"),
        ("liuhaotian/llava-v1.6-vicuna-7b", "llava-hf/llava-v1.6-vicuna-7b-hf"),
        ("liuhaotian/llava-v1.6-vicuna-13b", "llava-hf/llava-v1.6-vicuna-13b-hf"),
        ("liuhaotian/llava-v1.6-mistral-7b", "llava-hf/llava-v1.6-mistral-7b-hf"),
        ("liuhaotian/llava-v1.6-34b", "llava-hf/llava-v1.6-34b-hf"),
        ("llava-hf/llava-1.5-7b-hf", "llava-hf/llava-1.5-7b-hf"),  # HF-format names are used as given
        ("someone/my-llava-hf", "someone/my-llava-hf"),
    ],
)
def test_original_names_map_to_their_conversions(original: str | None, converted: str) -> None:
    assert resolve_checkpoint(original) == converted


def test_a_local_checkpoint_is_used_as_given(tmp_path: Path) -> None:
    assert resolve_checkpoint(str(tmp_path)) == str(tmp_path)


@pytest.mark.parametrize("name", ["liuhaotian/llava-v1.5-7b-lora", "llava-v1.5-7b"])
def test_unknown_names_are_one_line_errors_listing_the_known_ones(name: str) -> None:
    with pytest.raises(SubstitutionError) as caught:
        resolve_checkpoint(name)
    message = str(caught.value)
    assert "\n" not in message and name in message
    assert all(known in message for known in substitution.ORIGINAL_TO_HF_CHECKPOINTS)


def test_host_llava_model_args_are_honoured_or_refused_by_name() -> None:
    check_model_args(
        {"pretrained": "liuhaotian/llava-v1.5-13b", "conv_template": "vicuna_v1", "device": "cpu"}
        | {"truncation": "True", "truncate_context": "False", "model_name": "llava_v1.5", "tie_weights": "1"}
    )
    refusals = {
        "customized_config": {"customized_config": "x.json"},
        "'max_pixels'": {"max_pixels": "1"},
        "conv_template=chatml_direct": {"conv_template": "chatml_direct"},
    }
    for named, arguments in refusals.items():
        with pytest.raises(SubstitutionError, match=named) as caught:
            check_model_args(arguments)
        assert "\n" not in str(caught.value)


@pytest.fixture
def restore_llava_registration() -> Iterator[None]:
    """Undo the substitution's registry change and module state after a test."""
    from lmms_eval.models import MODEL_REGISTRY_V2

    manifest = MODEL_REGISTRY_V2.get_manifest("llava")
    saved = model_substitution.active()
    yield
    MODEL_REGISTRY_V2.register_manifest(manifest, overwrite=True)
    model_substitution.set_active(saved)


def test_prepare_substitutes_and_the_opt_out_refuses(
    monkeypatch: pytest.MonkeyPatch, restore_llava_registration: None
) -> None:
    from lmms_eval.models import MODEL_REGISTRY_V2

    from lmms_eval_tasks.host.launcher import check_models

    assert substitution.prepare(["random_guess"], None) == (None, None)
    monkeypatch.setenv(substitution.NO_SUBSTITUTION_ENV, "1")
    assert substitution.prepare(["llava"], None) == (None, None)
    refusal = check_models(["--model", "llava", "--tasks", "x"])
    assert refusal is not None and "cannot run on this machine" in refusal
    assert MODEL_REGISTRY_V2.resolve("llava").class_path == "lmms_eval.models.simple.llava.Llava"

    monkeypatch.delenv(substitution.NO_SUBSTITUTION_ENV)
    notice, problem = substitution.prepare(
        ["llava"], "pretrained=liuhaotian/llava-v1.5-13b,customized_config=x"
    )
    assert notice is None and problem is not None and "customized_config" in problem
    notice, problem = substitution.prepare(["llava"], "conv_template=vicuna_v1")
    assert problem is None and notice is not None and "\n" not in notice
    assert "liuhaotian/llava-v1.5-7b -> llava-hf/llava-1.5-7b-hf" in notice
    assert MODEL_REGISTRY_V2.resolve("llava").class_path == substitution.USED_CLASS
    assert check_models(["--model", "llava", "--tasks", "x"]) is None

    block = reports.provenance(None, "some_task")
    assert block["model_substitution"] == {
        "asked": "llava",
        "used": "llava_transformers",
        "checkpoint": "llava-hf/llava-1.5-7b-hf",
        "asked_checkpoint": "liuhaotian/llava-v1.5-7b",
    }
    assert any("--model llava was served by llava_transformers" in line for line in block["deviations"])
    reports.validate_report(reports.build_report(benchmark="dare", task="t", metrics={"x": 1.0}))


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_pretrained_is_an_error_not_the_default(
    value: str, restore_llava_registration: None
) -> None:
    # `pretrained=$CHECKPOINT` with the variable unset must not evaluate the 7B default in its place.
    with pytest.raises(SubstitutionError, match="pretrained= is empty") as caught:
        resolve_checkpoint(value)
    assert "\n" not in str(caught.value)
    notice, problem = substitution.prepare(["llava"], f"pretrained={value}")
    assert notice is None and problem is not None and "pretrained= is empty" in problem


@pytest.mark.parametrize("name", ["/no/such/dir", "./ckpt-not-here", "~/no-such-ckpt", "org/name/extra"])
def test_a_missing_folder_is_an_error_naming_it_before_the_run(name: str) -> None:
    # Taken as a Hub id it failed only at model load, with a dataset-cache "fix" as the last line.
    with pytest.raises(SubstitutionError, match="is no folder on this machine") as caught:
        resolve_checkpoint(name)
    assert name in str(caught.value) and "\n" not in str(caught.value)


def test_batch_size_in_model_args_is_refused_with_the_fix(restore_llava_registration: None) -> None:
    # The host passes --batch_size to the model too: batch_size in model_args was a TypeError at load.
    notice, problem = substitution.prepare(["llava"], "batch_size=1")
    assert notice is None and problem is not None
    assert "batch_size in --model_args" in problem and "drop it" in problem and "\n" not in problem


@pytest.mark.parametrize(
    ("value", "refuses"),
    [("0", False), ("false", False), ("FALSE", False), ("no", False), ("off", False), (" ", False)]
    + [("1", True), ("yes", True), ("true", True)],
)
def test_off_spellings_of_the_opt_out_keep_the_substitution(
    value: str, refuses: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(substitution.NO_SUBSTITUTION_ENV, value)
    assert substitution.disabled() is refuses


def _config(tmp_path: Path, entries: list[dict[str, str]]) -> Path:
    import yaml

    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump(entries), encoding="utf-8")
    return path


def test_a_config_list_is_checked_run_by_run_and_only_llava_reports_record_it(
    tmp_path: Path, restore_llava_registration: None
) -> None:
    from types import SimpleNamespace

    from lmms_eval_tasks.host.argument_checks import model_runs as _runs

    entries = [
        {"model": "llava", "model_args": "pretrained=liuhaotian/llava-v1.5-13b", "tasks": "dare_sample"},
        {"model": "llava_hf", "model_args": "pretrained=llava-hf/llava-1.5-7b-hf", "tasks": "dare_sample"},
    ]
    config = _config(tmp_path, entries)
    runs = _runs(["--config", str(config)])
    assert runs == [(entry["model"], entry["model_args"]) for entry in entries]
    # the command line's --model_args overrides every entry's, as the host merges them
    overridden = _runs(["--config", str(config), "--model_args", "pretrained=x/y"])
    assert overridden[0] == ("llava", "pretrained=x/y")
    assert _runs(["--model", "llava", "--model", "llava_hf"]) == [("llava_hf", None)]  # argparse: last wins

    refused = _config(tmp_path, [{"model": "llava", "model_args": "customized_config=x.json"}])
    notice, problem = substitution.prepare(*_split(_runs(["--config", str(refused)])))
    assert notice is None and problem is not None and "customized_config" in problem

    notice, problem = substitution.prepare(*_split(runs))
    assert problem is None and notice is not None
    assert "pretrained=liuhaotian/llava-v1.5-13b -> llava-hf/llava-1.5-13b-hf" in notice  # the config's
    assert "llava-v1.5-7b" not in notice
    llava_hf_run = SimpleNamespace(model="llava_hf", model_args="pretrained=llava-hf/llava-hf", limit=None)
    block = reports.provenance(llava_hf_run, "dare_sample")
    assert block["model_substitution"] is None  # the llava_hf run of the same process was not substituted
    assert not any("served by" in line for line in block["deviations"])
    llava_run = SimpleNamespace(model="llava", model_args="pretrained=liuhaotian/llava-v1.5-13b", limit=None)
    assert reports.provenance(llava_run, "dare_sample")["model_substitution"]["asked"] == "llava"


def _split(runs: list[tuple[str, str | None]]) -> tuple[list[str], list[str | None]]:
    return [model for model, _ in runs], [text for model, text in runs if model == "llava"]


# ---- the launcher, end to end on the tiny LLaVA (slow) ---------------------------------------------------


_arguments = card_command_arguments


@pytest.fixture
def single_run(tiny_llava_card_run: tuple[Path, str]) -> tuple[Path, str]:
    """The session's one launcher run of the card's command (conftest): (output folder, stderr)."""
    return tiny_llava_card_run


@pytest.mark.slow
def test_card_command_runs_and_every_report_records_the_substitution(
    single_run: tuple[Path, str], tiny_llava_dir: Path
) -> None:
    output, stderr = single_run
    [notice] = [line for line in stderr.splitlines() if "--model llava is served by" in line]
    assert f"pretrained={tiny_llava_dir} -> {tiny_llava_dir}" in notice
    report_files = sorted(output.rglob("lmms_eval_tasks/*/*_report.json"))
    assert {path.name.removesuffix("_report.json") for path in report_files} >= set(TASKS)
    for path in report_files:
        block = reports.read_report(path)["provenance"]
        assert block["model"] == "llava", path
        assert block["model_substitution"]["used"] == "llava_transformers", path
        assert block["model_substitution"]["checkpoint"] == str(tiny_llava_dir), path
        assert any("served by llava_transformers" in line for line in block["deviations"]), path
    results = results_json(output)["results"]
    assert {"dare_sample", "hallusionbench_offline_sample", LOG_TASK} <= set(results)
    # Out-Log (loglikelihood) with images, no --force_simple: one finite loss per option
    for sample in samples_jsonl(output, LOG_TASK):
        record = sample["single_accuracy"]
        assert len(record["losses"]) == 4 and all(math.isfinite(loss) for loss in record["losses"])
        assert record["prediction"] == "ABCD"[record["losses"].index(min(record["losses"]))]
    answers = [sample["filtered_resps"] for sample in samples_jsonl(output, "hallusionbench_offline_sample")]
    assert answers and all(isinstance(answer, str) and answer.strip() for answer in answers)


@pytest.mark.slow
def test_opt_out_fails_as_the_host_would(tmp_path: Path, tiny_llava_dir: Path) -> None:
    completed = run_launcher(
        *_arguments(tiny_llava_dir, tmp_path / "out"),
        environment=offline_environment(**{substitution.NO_SUBSTITUTION_ENV: "1"}),
        timeout=300,
    )
    assert completed.returncode == 2, completed.stderr[-3000:]
    assert "--model llava cannot run on this machine" in completed.stderr
    assert "is served by" not in completed.stderr and not (tmp_path / "out").exists()


def _launch_two_processes(
    accelerate: Path, tiny_llava_dir: Path, output: Path
) -> subprocess.CompletedProcess[str]:
    """The card's command under ``accelerate launch --multi_gpu --num_processes 2`` on the CPU (gloo)."""
    command = [
        str(accelerate), "launch", "--multi_gpu", "--num_processes", "2",
        "--main_process_port", free_port(), "-m", "lmms_eval_tasks", *_arguments(tiny_llava_dir, output),
    ]  # fmt: skip
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=offline_environment(PYTHONFAULTHANDLER="1"),
        cwd=REPO_ROOT,
        timeout=900,
        check=False,
    )


def test_the_launcher_destroys_the_process_group_of_a_run_that_ended_well(tmp_path: Path) -> None:
    """The host leaves torch's process group to interpreter exit, where gloo's worker threads can outlive
    Python and abort a rank (SIGABRT, "terminate called without an active exception"): the launcher destroys
    it when the host returned 0, and leaves it when the host ended with a code (stopped, SIGTERM, Ctrl-C)."""
    import torch.distributed as distributed

    from lmms_eval_tasks.host.launcher import end_process_group

    distributed.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        end_process_group(1)
        assert distributed.is_initialized()
        end_process_group(0)
        assert not distributed.is_initialized()
        end_process_group(0)  # none left: nothing to do
    finally:
        if distributed.is_initialized():
            distributed.destroy_process_group()


@pytest.mark.slow
def test_accelerate_two_processes_give_the_single_process_numbers(
    single_run: tuple[Path, str], tiny_llava_dir: Path, tmp_path: Path
) -> None:
    accelerate = Path(sys.executable).with_name("accelerate")  # the venv running the tests
    if not accelerate.exists():
        accelerate = Path(shutil.which("accelerate") or "accelerate")
    output = tmp_path / "two"

    def launch() -> subprocess.CompletedProcess[str]:
        shutil.rmtree(output, ignore_errors=True)
        return _launch_two_processes(accelerate, tiny_llava_dir, output)

    launched = run_two_processes(launch)
    log = launched.stdout + launched.stderr
    assert "process 2/2" in log  # the pack's model knows it is the second of two processes
    one, two = results_json(single_run[0])["results"], results_json(output)["results"]
    for task in TASKS:
        numeric = {
            key: value
            for key, value in one[task].items()
            if isinstance(value, float | int) and value == value
        }
        assert numeric, task
        assert all(two[task][key] == pytest.approx(value) for key, value in numeric.items()), task
    for path in output.rglob("lmms_eval_tasks/*/*_report.json"):
        assert reports.read_report(path)["provenance"]["model_substitution"]["asked"] == "llava"
