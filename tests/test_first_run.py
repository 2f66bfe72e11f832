"""The first real run, as a new user gets there: the host's dataset ids served from a `datasets` cache laid
out as the host's own download leaves it, a mirror through `dataset_path`, VRB's validation-only files, the
launcher's last line on a failed run, and the legacy plugin switch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lmms_eval_tasks import TASKS_DIR
from lmms_eval_tasks.tasks.vrb.generate import VQAV2_DATASET, VQAV2_VALIDATION_FILES
from tests.helpers import (
    COMMIT,
    REPO_ROOT,
    build_hub_cache,
    offline_environment,
    results_json,
    run_launcher,
    task_yaml,
)

pytestmark = pytest.mark.slow

HALLUSIONBENCH = "lmms-lab-encoder/HallusionBench"
SAMPLES = {
    "hallusionbench": TASKS_DIR / "hallusionbench" / "sample",
    "vrb": TASKS_DIR / "vrb" / "sample",
}


def host_yaml_dataset_path(relative: str) -> str:
    """``dataset_path`` of a host task YAML in the installed lmms_eval package."""
    import lmms_eval

    text = (Path(lmms_eval.__file__).parent / "tasks" / relative).read_text(encoding="utf-8")
    return next(
        line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("dataset_path:")
    )


def test_the_pack_reads_the_dataset_ids_the_host_reads() -> None:
    assert host_yaml_dataset_path("hallusion_bench/hallusion_bench_image.yaml") == HALLUSIONBENCH
    assert host_yaml_dataset_path("vqav2/_default_template_vqav2_yaml") == VQAV2_DATASET
    for relative in ("hallusionbench/yaml/hallusionbench.yaml", "vrb/yaml/levels/vrb_clean.yaml"):
        config = task_yaml(TASKS_DIR / relative)
        assert config["dataset_path"] in (HALLUSIONBENCH, VQAV2_DATASET), relative


@pytest.fixture(scope="module")
def host_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("hf_datasets")
    hallusionbench = SAMPLES["hallusionbench"]
    build_hub_cache(
        cache,
        HALLUSIONBENCH,
        {"image": hallusionbench / "image.parquet", "non_image": hallusionbench / "non_image.parquet"},
    )
    build_hub_cache(
        cache, VQAV2_DATASET, {"validation": SAMPLES["vrb"] / "vrb_sample.parquet"}, VQAV2_VALIDATION_FILES
    )
    for leftover in cache.glob("*.lock"):
        leftover.unlink()
    return cache


@pytest.fixture(scope="module")
def host_full_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache the host's own ``vqav2`` tasks leave: the whole of VQAv2 (validation and testdev) under the
    config id ``default``, no cache of VRB's validation-only ``data_files``; HallusionBench as above."""
    cache = tmp_path_factory.mktemp("hf_datasets_full")
    hallusionbench = SAMPLES["hallusionbench"]
    build_hub_cache(
        cache,
        HALLUSIONBENCH,
        {"image": hallusionbench / "image.parquet", "non_image": hallusionbench / "non_image.parquet"},
    )
    sample = SAMPLES["vrb"] / "vrb_sample.parquet"
    build_hub_cache(cache, VQAV2_DATASET, {"validation": sample, "testdev": sample})
    for leftover in cache.glob("*.lock"):
        leftover.unlink()
    return cache


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for the module's empty hub cache and empty datasets cache (``empty_cache``): one pair for
    the module, so the runs of one cache share an environment and with it a warm launcher (a new
    environment is a new import of the host); no run downloads, none caches a hub dataset."""
    return tmp_path_factory.mktemp("empty")


def _environment(cache: Path, empty: Path, **extra: str) -> dict[str, str]:
    return offline_environment(HF_DATASETS_CACHE=str(cache), HF_HUB_CACHE=str(empty / "empty_hub"), **extra)


def _report(output: Path, task: str) -> dict[str, Any]:
    [path] = list(output.rglob(f"lmms_eval_tasks/*/{task}_report.json"))
    return json.loads(path.read_text(encoding="utf-8"))


# The launcher runs below come grouped by datasets cache (the host's, the whole VQAv2, empty, the default):
# each cache is an environment of its own, and a test worker keeps a warm launcher for only a few.


def test_hallusionbench_and_vrb_clean_run_offline_from_the_hosts_cache(
    host_cache: Path, empty: Path, tmp_path: Path
) -> None:
    output = tmp_path / "out"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--tasks",
        "hallusionbench_offline,vrb_clean",
        "--output_path",
        str(output),
        environment=_environment(host_cache, empty),
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    results = results_json(output)
    # the sample's 24 image + 5 non_image questions, the non_image split read from the same cache
    assert results["n-samples"]["hallusionbench_offline"]["effective"] == 29
    assert results["n-samples"]["vrb_clean"]["effective"] == len(
        __import__("pyarrow.parquet").parquet.read_table(SAMPLES["vrb"] / "vrb_sample.parquet")
    )
    read = _report(output, "hallusionbench_offline")["provenance"]["datasets"]
    assert [(entry["id"], entry["split"], entry["revision"]) for entry in read] == [
        (HALLUSIONBENCH, "image", COMMIT),
        (HALLUSIONBENCH, "non_image", COMMIT),
    ]
    assert all(entry["revision_kind"] == "hub commit" for entry in read)
    [vrb] = _report(output, "vrb_clean")["provenance"]["datasets"]
    assert (vrb["id"], vrb["split"], vrb["revision"], vrb["data_files"]) == (
        VQAV2_DATASET,
        "validation",
        COMMIT,
        VQAV2_VALIDATION_FILES,
    )


def test_hallusionbench_without_a_judge_refuses_before_any_model_loads(
    host_cache: Path, empty: Path, tmp_path: Path
) -> None:
    """A judged benchmark with no judge endpoint used to exit 0 scored by the rule judge (a WARNING line in
    a long log); now one line names the key variables and the rule-judged task, before the model loads."""
    output = tmp_path / "out"
    environment = _environment(host_cache, empty)
    for name in ("OPENAI_API_KEY", "OPENAI_API_URL", "AZURE_ENDPOINT", "LMMS_EVAL_TASKS_JUDGE"):
        environment.pop(name, None)
    completed = run_launcher(
        "--model",
        "random_guess",
        "--tasks",
        "hallusionbench",
        "--output_path",
        str(output),
        environment=environment,
    )
    assert completed.returncode == 2
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith("lmms_eval: hallusionbench is scored by an LLM judge and none is configured"), last
    assert "OPENAI_API_KEY" in last and "hallusionbench_offline" in last, last
    assert "LMMS_EVAL_TASKS_JUDGE=rule" in last
    assert not output.exists()


def test_vrb_reads_the_hosts_whole_vqav2_cache_offline(
    host_full_cache: Path, empty: Path, tmp_path: Path
) -> None:
    """The host's ``default`` config of VQAv2 serves vrb_clean (its own validation-only config id
    ``default-<hash>`` is not cached); the report says the whole dataset's cache was read."""
    from lmms_eval_tasks.host.launcher import check_tasks

    output = tmp_path / "out"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--tasks",
        "hallusionbench_offline,vrb_clean",
        "--output_path",
        str(output),
        environment=_environment(host_full_cache, empty),
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    rows = len(__import__("pyarrow.parquet").parquet.read_table(SAMPLES["vrb"] / "vrb_sample.parquet"))
    assert results_json(output)["n-samples"]["vrb_clean"]["effective"] == rows  # validation only
    [vrb] = _report(output, "vrb_clean")["provenance"]["datasets"]
    assert (vrb["id"], vrb["config"], vrb["split"], vrb["revision"], vrb["data_files"]) == (
        VQAV2_DATASET,
        "default",
        "validation",
        COMMIT,
        None,
    )
    # the launcher's check before any model loads agrees: nothing is missing
    environment = _environment(host_full_cache, empty)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in environment.items():
            patch.setenv(name, value)
        assert check_tasks(["--tasks", "vrb_clean,hallusionbench_offline"]) is None


def test_offline_without_the_dataset_the_last_line_names_it_and_the_fix(empty: Path, tmp_path: Path) -> None:
    """Nothing cached: the launcher stops before any model loads, one line naming the dataset, what to run
    online and the offline variables (the host's own error said only OfflineModeIsEnabled)."""
    output = tmp_path / "out"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--tasks",
        "vrb_clean",
        "--output_path",
        str(output),
        environment=_environment(empty / "empty_cache", empty),
    )
    assert completed.returncode == 2
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"lmms_eval: vrb_clean reads the dataset {VQAV2_DATASET}, which is not in the datasets cache ("
    ), last
    assert "HF_HUB_OFFLINE=1" in last and "run the same command once with network" in last, last
    assert not output.exists()  # stopped before the host ran


def _users_hallusionbench_task(tmp_path: Path, base: str) -> Path:
    """A folder for ``--include_path`` holding the user's task ``my_hallusionbench``: the pack's ``base``
    YAML with its dataset moved to a local mirror of both sample splits (nothing under the hub id cached)."""
    mirror = tmp_path / "mirror" / "data"
    mirror.mkdir(parents=True)
    for split in ("image", "non_image"):
        source = SAMPLES["hallusionbench"] / f"{split}.parquet"
        shutil.copyfile(source, mirror / f"{split}-00000-of-00001.parquet")
    include = tmp_path / "tasks"
    include.mkdir()
    (include / "my_hallusionbench.yaml").write_text(
        "include: " + str(TASKS_DIR / "hallusionbench" / "yaml" / base) + "\n"
        "task: my_hallusionbench\n"
        f"dataset_path: {mirror.parent}\n",
        encoding="utf-8",
    )
    return include


def test_an_overridden_dataset_path_moves_every_hallusionbench_split(empty: Path, tmp_path: Path) -> None:
    """A mirror: a local folder holding both splits as parquet files; nothing under the hub id is cached."""
    include = _users_hallusionbench_task(tmp_path, "hallusionbench_offline.yaml")
    output = tmp_path / "out"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--tasks",
        "my_hallusionbench",
        "--include_path",
        str(include),
        "--output_path",
        str(output),
        environment=_environment(empty / "empty_cache", empty),
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert results_json(output)["n-samples"]["my_hallusionbench"]["effective"] == 29


def test_a_users_task_built_on_a_judged_task_refuses_without_a_judge(tmp_path: Path) -> None:
    """A task of the user's own (``--include_path``, e.g. `lmms-eval-tasks robustness hallusionbench`'s
    variants) that includes ``hallusionbench.yaml`` is judged as ``hallusionbench``: with no judge endpoint it
    used to exit 0 scored by the rule judge behind a WARNING (the launcher's check knows pack names only).
    Now it stops before any answer is generated, the last line naming the key variables and the fix."""
    include = _users_hallusionbench_task(tmp_path, "hallusionbench.yaml")
    environment = offline_environment()
    for name in ("OPENAI_API_KEY", "OPENAI_API_URL", "AZURE_ENDPOINT", "LMMS_EVAL_TASKS_JUDGE"):
        environment.pop(name, None)
    output = tmp_path / "out"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--include_path",
        str(include),
        "--tasks",
        "my_hallusionbench",
        "--output_path",
        str(output),
        environment=environment,
    )
    assert completed.returncode != 0, completed.stderr[-2000:]
    last = completed.stderr.strip().splitlines()[-1]
    assert "hallusionbench is scored by an LLM judge and none is configured" in last, last
    assert "OPENAI_API_KEY" in last and "LMMS_EVAL_TASKS_JUDGE=rule" in last, last
    assert not list(output.rglob("*_report.json")) and not list(output.rglob("*_samples.jsonl"))


def test_vrb_passes_only_the_validation_files_to_the_real_builder(tmp_path: Path) -> None:
    """The task's load_dataset arguments through `datasets`' resolution on a local copy of the repo layout:
    the validation shards are read, the testdev/test shards are not (nor downloaded from the hub)."""
    import datasets

    repo = tmp_path / "VQAv2"
    (repo / "data").mkdir(parents=True)
    for name in (
        "validation-00000-of-00002",
        "validation-00001-of-00002",
        "testdev-00000-of-00001",
        "test-00000-of-00001",
    ):
        shutil.copyfile(SAMPLES["vrb"] / "vrb_sample.parquet", repo / "data" / f"{name}.parquet")
    config = task_yaml(TASKS_DIR / "vrb" / "yaml" / "levels" / "vrb_clean.yaml")
    builder = datasets.load_dataset_builder(
        str(repo), **config["dataset_kwargs"], cache_dir=str(tmp_path / "c")
    )
    resolved = {
        split: sorted(Path(path).name for path in files) for split, files in builder.config.data_files.items()
    }
    assert resolved == {
        "validation": ["validation-00000-of-00002.parquet", "validation-00001-of-00002.parquet"]
    }


def test_missing_contextual_images_the_last_line_is_the_packs_message(tmp_path: Path) -> None:
    output = tmp_path / "out"
    completed = run_launcher(
        "--model",
        "random_guess",
        "--model_args",
        "seed=0",
        "--tasks",
        "contextual",
        "--output_path",
        str(output),
        environment=offline_environment(LMMS_EVAL_TASKS_DATA_CONTEXTUAL=str(tmp_path / "no_images")),
    )
    assert completed.returncode != 0
    last = completed.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "lmms_eval: evaluation failed: FileNotFoundError: contextual: 100 of 100 images"
    ), last
    assert "row 0 (" in last and "lmms-eval-tasks prepare contextual" in last, last
    assert "RetryError" not in last


def test_plugin_switch_loads_the_packs_models_and_says_where_its_tasks_are(tmp_path: Path) -> None:
    script = "from lmms_eval.models import get_model\nprint(get_model('random_guess').__name__)\n"
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO_ROOT,
        env={**offline_environment(), "LMMS_EVAL_PLUGINS": "lmms_eval_tasks"},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.strip().splitlines()[-1] == "RandomGuess"
    notes = [
        line for line in completed.stderr.splitlines() if "LMMS_EVAL_PLUGINS loads the pack's models" in line
    ]
    assert len(notes) == 1 and "`lmms_eval` launcher" in notes[0] and "--include_path" in notes[0]
    assert os.environ.get("LMMS_EVAL_PLUGINS") is None


def _raised(make: Any) -> BaseException:
    try:
        make()
    except BaseException as error:  # noqa: BLE001 - the test inspects what was raised
        return error
    raise AssertionError("nothing raised")


def test_last_line_of_a_cause_without_words_keeps_its_wrappers_message() -> None:
    # `raise ConnectionError(...) from TimeoutError()`: the innermost cause has no message; the last line
    # said "TimeoutError: TimeoutError" and lost what timed out (and the offline-dataset fix)
    from lmms_eval_tasks.host.launcher import failure_line

    def timed_out() -> None:
        try:
            raise TimeoutError()
        except TimeoutError as error:
            raise ConnectionError("Couldn't reach 'lmms-lab-encoder/VRB' on the Hugging Face Hub") from error

    line = failure_line(_raised(timed_out))
    assert line.startswith(
        "lmms_eval: evaluation failed: ConnectionError (from TimeoutError): Couldn't reach "
        "'lmms-lab-encoder/VRB' on the Hugging Face Hub; fix: an offline run"
    ), line

    def interrupted() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as error:
            raise RuntimeError("judge stopped after 3 of 10 items") from error

    assert failure_line(_raised(interrupted)) == (
        "lmms_eval: evaluation failed: RuntimeError (from KeyboardInterrupt): "
        "judge stopped after 3 of 10 items"
    )
    # nothing anywhere says more than the type: the type it is
    assert failure_line(_raised(lambda: (_ for _ in ()).throw(OSError()))) == (
        "lmms_eval: evaluation failed: OSError: OSError"
    )


def test_provenance_datasets_keep_no_credentials_of_a_data_files_url(monkeypatch: pytest.MonkeyPatch) -> None:
    # a task YAML's dataset_kwargs may name files behind a signed or credentialed URL; the report's
    # provenance.datasets must not carry the user info, the query, or the HF token's value
    from lmms_eval_tasks.reporting import datasets_read
    from lmms_eval_tasks.reporting.schema import provenance

    monkeypatch.setenv("HF_TOKEN", "hf_secretvalue123456")
    task = "toy_credentials_task"
    datasets_read.record(
        task,
        {
            "id": "https://bob:hunter2@data.example/ds",
            "config": None,
            "split": "test",
            "revision": "abc",
            "revision_kind": "fingerprint",
            "data_files": {
                "test": [
                    "https://data.example/t.parquet?X-Amz-Signature=s3cr3t",
                    "/data/hf_secretvalue123456/x",
                ]
            },
        },
        replace=True,
    )
    try:
        [entry] = provenance(None, task)["datasets"]
    finally:
        datasets_read.clear()
    assert entry["id"] == "https://data.example/ds"
    assert entry["data_files"] == {"test": ["https://data.example/t.parquet", "/data/[REDACTED]/x"]}
    assert "hunter2" not in json.dumps(entry) and "s3cr3t" not in json.dumps(entry)


def test_last_line_never_shows_a_secret_from_the_causes_message(monkeypatch: pytest.MonkeyPatch) -> None:
    from lmms_eval_tasks.host.launcher import failure_line

    monkeypatch.setenv("HF_TOKEN", "hf_tokenvalue0123456789")

    def refused() -> None:
        raise ConnectionError(
            "401 for url https://hub.example/x?token=hf_tokenvalue0123456789 (Authorization: Bearer abc123)"
        )

    line = failure_line(_raised(refused))
    assert "hf_tokenvalue0123456789" not in line and "abc123" not in line, line
    assert line.startswith(
        "lmms_eval: evaluation failed: ConnectionError: 401 for url https://hub.example/x?token=[REDACTED]"
    )


def test_no_network_one_attempt_then_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Online but no hub (a closed port stands in for a cluster node without internet): one connection
    attempt, then the line naming the dataset, instead of the host's ten download retries (153 s)."""
    import socket

    from lmms_eval_tasks.host.launcher import check_checkpoints, check_tasks

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed once the block ends: connections are refused
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "datasets"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("LMMS_EVAL_TASKS_JUDGE", "rule")
    line = check_tasks(["--tasks", "vrb_clean"])  # before any model or dataset loads
    assert line is not None and line.startswith(f"lmms_eval: vrb_clean reads the dataset {VQAV2_DATASET}, ")
    assert "the hub is unreachable from here" in line and "HF_HUB_OFFLINE" in line, line
    # `--model llava` served by the pack's LLaVA: the line names the transformers checkpoint it needs
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from lmms_eval_tasks.host import substitution

    monkeypatch.setattr(substitution, "active", lambda: {"asked": "llava"})  # the launcher substituted llava
    line = check_checkpoints(["--model", "llava", "--tasks", "dare"])
    assert line is not None and line.startswith(
        "lmms_eval: --model llava needs the checkpoint llava-hf/llava-1.5-7b-hf, which is not in the "
        "Hugging Face cache ("
    ), line
    assert "HF_HUB_OFFLINE=1 forbids downloading it" in line and "pretrained=" in line
