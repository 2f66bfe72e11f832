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

from lmms_eval_tasks import reports, substitution
from lmms_eval_tasks.substitution import SubstitutionError, check_model_args, resolve_checkpoint
from tests.helpers import REPO_ROOT, offline_environment, results_json, run_launcher, samples_jsonl

LOG_TASK = "dare_sample_single_log_p1"
TASKS = ("dare_sample", "hallusionbench_offline_sample", LOG_TASK)


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
    saved = substitution._active
    yield
    MODEL_REGISTRY_V2.register_manifest(manifest, overwrite=True)
    substitution._active = saved


def test_prepare_substitutes_and_the_opt_out_refuses(
    monkeypatch: pytest.MonkeyPatch, restore_llava_registration: None
) -> None:
    from lmms_eval.models import MODEL_REGISTRY_V2
    from lmms_eval_tasks.launcher import check_models

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


# ---- the launcher, end to end on the tiny LLaVA (slow) ---------------------------------------------------


def _arguments(tiny_llava_dir: Path, output: Path) -> list[str]:
    return [
        "--model", "llava", "--model_args", f"pretrained={tiny_llava_dir}", "--tasks", ",".join(TASKS),
        "--limit", "3", "--verbosity", "INFO", "--gen_kwargs", "max_new_tokens=8",
        "--output_path", str(output), "--log_samples",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def single_run(tiny_llava_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One launcher run of the card's command on the sample tasks: (output folder, stderr)."""
    output = tmp_path_factory.mktemp("card") / "one"
    completed = run_launcher(*_arguments(tiny_llava_dir, output), timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return output, completed.stderr


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


@pytest.mark.slow
def test_accelerate_two_processes_give_the_single_process_numbers(
    single_run: tuple[Path, str], tiny_llava_dir: Path, tmp_path: Path
) -> None:
    accelerate = Path(sys.executable).with_name("accelerate")  # the venv running the tests
    if not accelerate.exists():
        accelerate = Path(shutil.which("accelerate") or "accelerate")
    output = tmp_path / "two"
    launched = subprocess.run(
        [
            str(accelerate),
            "launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--main_process_port",
            "29573",
            "-m",
            "lmms_eval_tasks",
            *_arguments(tiny_llava_dir, output),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        env=offline_environment(),
        cwd=REPO_ROOT,
        timeout=900,
        check=False,
    )
    log = launched.stdout + launched.stderr
    assert launched.returncode == 0, log[-4000:]
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
